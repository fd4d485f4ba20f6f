/**
 * The multi-platform image: one OCI image index naming each platform's
 * manifest with its `platform` (architecture, os), which is what lets
 * docker, podman, containerd and a registry pick the manifest of the
 * machine that pulls or loads it.
 *
 * umoci (0.4.7, Debian 12's) writes one manifest per tag and cannot write an
 * index of platforms: it has no command for it, and its index.json entries
 * carry no `platform`. So umoci writes both images into one layout under a
 * tag each, and this file writes the one JSON document umoci cannot: the
 * nested index, whose descriptors are umoci's own (media type, digest, size)
 * plus the platform read back from each image's config. index.json then
 * names that nested index alone, as `docker save` and buildx's OCI exporter
 * write a multi-platform image, so containerd's importer stores one image
 * (the index) under the name.
 */
import { join } from "node:path";
import { ImageBuildError } from "./errors";
import { readLayoutIndex, refNameAnnotation, taggedEntry, writeLayoutIndex } from "./layout-index";
import { blobPath, configSchema, indexSchema, manifestSchema, mediaTypes, readJson, writeJsonBlob, type Descriptor } from "./oci-blobs";

/**
 * writePlatformIndex replaces the layout's per-platform tags `platformTags`
 * (in that order) by one index tagged `tag`, and returns its descriptor.
 */
export function writePlatformIndex(layout: string, platformTags: readonly string[], tag: string): Descriptor {
  const top = readLayoutIndex(layout);
  const manifests = platformTags.map((platformTag): Descriptor => {
    const entry = taggedEntry(top, platformTag);
    if (entry === undefined || entry.mediaType !== mediaTypes.manifest) throw new ImageBuildError(`${top.path} has no image manifest tagged ${platformTag}`);
    const manifest = readJson(manifestSchema, join(layout, blobPath(entry.digest)));
    const config = readJson(configSchema, join(layout, blobPath(manifest.config.digest)));
    return { mediaType: entry.mediaType, digest: entry.digest, size: entry.size, platform: { architecture: config.architecture, os: config.os } };
  });
  if (top.manifests.length !== platformTags.length) throw new ImageBuildError(`${top.path} holds ${top.manifests.length} images, expected the ${platformTags.length} tagged ${platformTags.join(", ")}`);
  const platforms = manifests.map((descriptor) => `${descriptor.platform?.os}/${descriptor.platform?.architecture}`);
  if (new Set(platforms).size !== platforms.length) throw new ImageBuildError(`two images of the index have the same platform: ${platforms.join(", ")}`);
  const index = writeJsonBlob(layout, mediaTypes.index, { schemaVersion: 2, mediaType: mediaTypes.index, manifests });
  const named = { ...index, annotations: { [refNameAnnotation]: tag } };
  writeLayoutIndex(layout, named);
  return named;
}

/** platformManifests lists the manifests of the index blob `indexDigest`, each with its platform. */
export function platformManifests(layout: string, indexDigest: string): Descriptor[] {
  return readJson(indexSchema, join(layout, blobPath(indexDigest))).manifests;
}
