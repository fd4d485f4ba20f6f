import { describe, expect, it } from "bun:test";
import { platformOf, versionLine } from "../../../src/cli/version";

describe("--version", () => {
  it("names the platform as Go and OCI images do", () => {
    expect([platformOf("linux", "x64"), platformOf("linux", "arm64")]).toEqual(["linux/amd64", "linux/arm64"]);
  });

  it("prints name, version, commit and the platform it runs as", () => {
    expect(versionLine()).toBe(`csi-attacher 0.1.0 (commit unbuilt, ${platformOf(process.platform, process.arch)})`);
  });
});
