import { describe, expect, it } from "bun:test";
import { createHash } from "node:crypto";
import { buildTargets, crossTargets, defaultOutfile, hostTarget, targetFor } from "../../../scripts/build/build-targets";
import { BuildError } from "../../../scripts/build/errors";
import { lockedPackage, tarballUrl, verifyIntegrity } from "../../../scripts/build/target-runtime";
import packageLock from "../../../package-lock.json" with { type: "json" };
import packageJson from "../../../package.json" with { type: "json" };

describe("build targets", () => {
  it("reads a platform or Docker's TARGETARCH into Bun's target", () => {
    expect([targetFor("linux/arm64").bunTarget, targetFor("arm64").bunTarget, targetFor("amd64").bunTarget]).toEqual(["bun-linux-arm64", "bun-linux-arm64", "bun-linux-x64"]);
    expect(() => targetFor("linux/riscv64")).toThrow(BuildError);
  });

  it("writes dist/csi-attacher without --target and dist/csi-attacher-<arch> with one", () => {
    expect([defaultOutfile(undefined), defaultOutfile(targetFor("linux/arm64")), defaultOutfile(targetFor("linux/amd64"))]).toEqual(["dist/csi-attacher", "dist/csi-attacher-arm64", "dist/csi-attacher-amd64"]);
  });

  it("knows the host's CPU by Node's name", () => {
    expect([hostTarget("x64")?.platform, hostTarget("arm64")?.platform, hostTarget("ia32")]).toEqual(["linux/amd64", "linux/arm64", undefined]);
  });

  it("cross-compiles for every CPU but the host's, and for all where Bun has no target for the host", () => {
    const platforms = (nodeArch: string) => crossTargets(nodeArch).map((target) => target.platform);
    expect([platforms("x64"), platforms("arm64"), platforms("ia32")]).toEqual([["linux/arm64"], ["linux/amd64"], ["linux/amd64", "linux/arm64"]]);
  });

  it("takes every target's runtime at the Bun version package.json pins, with the lock file's sha512", () => {
    const text = JSON.stringify(packageLock);
    for (const target of buildTargets) {
      const pin = lockedPackage(text, target.runtimePackage);
      expect({ version: pin.version, integrity: pin.integrity.startsWith("sha512-") }).toEqual({ version: packageJson.devDependencies.bun, integrity: true });
    }
    expect(() => lockedPackage(text, "@oven/bun-linux-riscv64")).toThrow(BuildError);
  });
});

describe("target runtime", () => {
  it("fetches a scoped package's tarball where the npm registry serves it", () => {
    const pin = { name: "@oven/bun-linux-aarch64", version: "1.4.5", integrity: "sha512-x" };
    expect(tarballUrl("https://registry.npmjs.org/", pin)).toBe("https://registry.npmjs.org/@oven/bun-linux-aarch64/-/bun-linux-aarch64-1.4.5.tgz");
    expect(tarballUrl("https://mirror.example/npm", pin)).toBe("https://mirror.example/npm/@oven/bun-linux-aarch64/-/bun-linux-aarch64-1.4.5.tgz");
  });

  it("refuses a tarball whose sha512 is not the lock file's", () => {
    const bytes = new TextEncoder().encode("a runtime");
    const pin = { name: "@oven/bun-linux-aarch64", version: "1.4.5", integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}` };
    expect(() => verifyIntegrity(pin, bytes, "test")).not.toThrow();
    expect(() => verifyIntegrity(pin, new TextEncoder().encode("another runtime"), "test")).toThrow(/refusing to build with it/);
  });
});
