import { describe, expect, it } from "bun:test";
import { caBundle } from "../../../scripts/image/ca-bundle";
import { ImageBuildError } from "../../../scripts/image/errors";
import { imageName, ociArchitecture, parseVersionLine, sourceDateEpoch } from "../../../scripts/image/image-identity";
import { emulatorTools, missingPackages, requiredTools } from "../../../scripts/image/required-tools";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { attacherContainer, readDeployment } from "../../ground/deployment-manifest";

describe("image identity", () => {
  it("names the image as deploy/kubernetes/deployment.yaml runs it", () => {
    expect(`${imageName.repository}:${imageName.tag}`).toBe(attacherContainer(readDeployment()).image);
  });

  it("reads version and commit from the binary's --version line", () => {
    expect(parseVersionLine("csi-attacher 0.1.0 (commit 788e42efd21a-dirty, linux/arm64)\n")).toEqual({ version: "0.1.0", commit: "788e42efd21a-dirty", platform: "linux/arm64" });
    expect(() => parseVersionLine("bun 1.4.5")).toThrow(ImageBuildError);
    // The line before the platform was added: an image cannot say which CPU such a binary is for.
    expect(() => parseVersionLine("csi-attacher 0.1.0 (commit 788e42efd21a)\n")).toThrow(ImageBuildError);
  });

  it("takes SOURCE_DATE_EPOCH when set and refuses one that is not seconds", () => {
    expect(sourceDateEpoch({ SOURCE_DATE_EPOCH: "1700000000" })).toBe(1_700_000_000);
    expect(() => sourceDateEpoch({ SOURCE_DATE_EPOCH: "yesterday" })).toThrow(/SOURCE_DATE_EPOCH="yesterday" is not a number of seconds/);
  });

  it("names the image architecture as OCI and Debian do", () => {
    expect([ociArchitecture("x64"), ociArchitecture("arm64")]).toEqual(["amd64", "arm64"]);
    expect(() => ociArchitecture("ia32")).toThrow(ImageBuildError);
  });

  it("lists the Debian packages of missing tools once each, sorted", () => {
    expect(missingPackages(requiredTools, (tool) => !["umoci", "apt-get", "apt-cache"].includes(tool))).toEqual(["apt", "umoci"]);
    expect(missingPackages(requiredTools, () => true)).toEqual([]);
  });

  it("installs the emulator of another CPU from qemu-user-static", () => {
    expect(missingPackages({ ...requiredTools, ...emulatorTools(["qemu-aarch64-static"]) }, (tool) => tool !== "qemu-aarch64-static")).toEqual(["qemu-user-static"]);
  });
});

describe("CA bundle", () => {
  it("joins the Mozilla certificates in byte order of name, each ending in a newline, as update-ca-certificates does", () => {
    const share = mkdtempSync(join(tmpdir(), "ca-bundle-"));
    try {
      mkdirSync(join(share, "mozilla"));
      writeFileSync(join(share, "mozilla/b_Root.crt"), "B\n");
      writeFileSync(join(share, "mozilla/A_Root.crt"), "A");
      writeFileSync(join(share, "mozilla/README"), "not a certificate");
      expect(caBundle(share)).toBe("A\nB\n");
    } finally {
      rmSync(share, { recursive: true, force: true });
    }
  });
});
