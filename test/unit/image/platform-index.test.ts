import { afterEach, describe, expect, it } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ImageBuildError } from "../../../scripts/image/errors";
import { blobPath, mediaTypes, writeJsonBlob } from "../../../scripts/image/oci-blobs";
import { platformManifests, writePlatformIndex } from "../../../scripts/image/platform-index";

const layouts: string[] = [];

/** layoutWith writes a layout as umoci leaves it: one manifest per tag, each config naming its CPU, no platform in index.json. */
function layoutWith(images: readonly { tag: string; architecture: string }[]): string {
  const layout = mkdtempSync(join(tmpdir(), "platform-index-"));
  layouts.push(layout);
  mkdirSync(join(layout, "blobs/sha256"), { recursive: true });
  const manifests = images.map(({ tag, architecture }) => {
    const config = writeJsonBlob(layout, "application/vnd.oci.image.config.v1+json", { architecture, os: "linux", rootfs: { type: "layers", diff_ids: [] } });
    const manifest = writeJsonBlob(layout, mediaTypes.manifest, { schemaVersion: 2, mediaType: mediaTypes.manifest, config, layers: [] });
    return { ...manifest, annotations: { "org.opencontainers.image.ref.name": tag } };
  });
  writeFileSync(join(layout, "index.json"), JSON.stringify({ schemaVersion: 2, manifests }));
  return layout;
}

afterEach(() => {
  for (const layout of layouts.splice(0)) rmSync(layout, { recursive: true, force: true });
});

describe("platform index", () => {
  it("names one index under the tag, listing each tagged manifest in order with its config's platform", () => {
    const layout = layoutWith([{ tag: "amd64", architecture: "amd64" }, { tag: "arm64", architecture: "arm64" }]);
    const umociIndex = JSON.parse(readFileSync(join(layout, "index.json"), "utf8")) as { manifests: { digest: string }[] };
    const index = writePlatformIndex(layout, ["amd64", "arm64"], "latest");
    expect(JSON.parse(readFileSync(join(layout, "index.json"), "utf8"))).toEqual({
      schemaVersion: 2,
      mediaType: mediaTypes.index,
      manifests: [{ mediaType: mediaTypes.index, digest: index.digest, size: index.size, annotations: { "org.opencontainers.image.ref.name": "latest" } }],
    });
    expect(readFileSync(join(layout, blobPath(index.digest))).length).toBe(index.size);
    expect(platformManifests(layout, index.digest).map((manifest) => ({ digest: manifest.digest, platform: manifest.platform }))).toEqual([
      { digest: umociIndex.manifests[0]?.digest ?? "", platform: { architecture: "amd64", os: "linux" } },
      { digest: umociIndex.manifests[1]?.digest ?? "", platform: { architecture: "arm64", os: "linux" } },
    ]);
  });

  it("writes the same index digest for the same images", () => {
    const digests = [0, 1].map(() => writePlatformIndex(layoutWith([{ tag: "amd64", architecture: "amd64" }, { tag: "arm64", architecture: "arm64" }]), ["amd64", "arm64"], "latest").digest);
    expect(digests[1]).toBe(digests[0] ?? "");
  });

  it("refuses a missing tag, an image it was not told of, and two images of one platform", () => {
    expect(() => writePlatformIndex(layoutWith([{ tag: "amd64", architecture: "amd64" }]), ["amd64", "arm64"], "latest")).toThrow(ImageBuildError);
    expect(() => writePlatformIndex(layoutWith([{ tag: "amd64", architecture: "amd64" }, { tag: "arm64", architecture: "arm64" }]), ["amd64"], "latest")).toThrow(/holds 2 images/);
    expect(() => writePlatformIndex(layoutWith([{ tag: "a", architecture: "arm64" }, { tag: "b", architecture: "arm64" }]), ["a", "b"], "latest")).toThrow(/same platform/);
  });
});
