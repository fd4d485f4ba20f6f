/**
 * The archive `docker load`, `podman load`, `skopeo copy oci-archive:` and
 * `k3s ctr images import` all accept: a tar of the OCI layout umoci wrote,
 * as `docker save` has written one since Docker 25.
 *
 * - index.json names the image twice: `io.containerd.image.name`, fully
 *   qualified, is the one containerd's importer (which `k3s ctr images
 *   import` runs) and podman 4 read first; without it (checked with
 *   containerd 1.6 and podman 4.3) ctr stores the bare `bun-csi-attacher:latest`,
 *   which the kubelet's `docker.io/library/...` never matches, and podman
 *   stores `localhost/bun-csi-attacher:latest`. `org.opencontainers.image.ref.name`
 *   is what skopeo's `oci-archive:FILE:NAME` looks up.
 * - manifest.json beside it is Docker's own index: a Docker engine that
 *   stores images itself (no containerd image store) loads only from it.
 *   It points at the same blobs, so the image is stored once. It cannot
 *   say which platform an entry is for, so it lists each platform's image
 *   under the same tag, amd64 last: such an engine loads every entry unless
 *   `docker load --platform` picks one (moby's tarexport), and the last
 *   loaded holds the tag.
 */
import { chmodSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ImageBuildError } from "./errors";
import { readLayoutIndex, refNameAnnotation, taggedEntry, writeLayoutIndex } from "./layout-index";
import { blobPath, manifestSchema, readJson } from "./oci-blobs";
import { platformManifests } from "./platform-index";
import { writeReproducibleTar } from "./reproducible-tar";

/** The annotation containerd's importer names an image by (beside ref.name, which layout-index.ts defines). */
const containerdNameAnnotation = "io.containerd.image.name";

/** DockerManifestEntry is one image of Docker's manifest.json. */
export interface DockerManifestEntry {
  readonly Config: string;
  readonly RepoTags: readonly string[];
  readonly Layers: readonly string[];
}

/**
 * nameImage sets both naming annotations on the index entry tagged `tag`
 * (the one entry: the platform index) and returns that entry's digest.
 */
export function nameImage(layout: string, tag: string, refName: string, containerdName: string): string {
  const index = readLayoutIndex(layout);
  const entry = taggedEntry(index, tag);
  if (entry === undefined || index.manifests.length !== 1) throw new ImageBuildError(`${index.path} should hold exactly the one manifest tagged ${tag}`);
  writeLayoutIndex(layout, { ...entry, annotations: { ...entry.annotations, [containerdNameAnnotation]: containerdName, [refNameAnnotation]: refName } });
  return entry.digest;
}

/** dockerManifest is the manifest.json entry for the one-platform image whose manifest blob is `manifestDigest`. */
export function dockerManifest(layout: string, manifestDigest: string, repoTag: string): DockerManifestEntry {
  const manifest = readJson(manifestSchema, join(layout, blobPath(manifestDigest)));
  return { Config: blobPath(manifest.config.digest), RepoTags: [repoTag], Layers: manifest.layers.map((layer) => blobPath(layer.digest)) };
}

/** Options of {@link writeImageArchive}. */
export interface ImageArchiveOptions {
  readonly layout: string;
  readonly tag: string;
  /** The short name (`bun-csi-attacher:latest`): ref.name and Docker's RepoTags. */
  readonly shortName: string;
  /** The fully qualified name containerd stores it under. */
  readonly qualifiedName: string;
  readonly file: string;
  readonly mtime: number;
}

/**
 * makeWorldReadable sets 0644 on files and 0755 on directories under `dir`:
 * umoci writes blobs 0600, and a non-root user unpacking the archive by hand
 * could not read them.
 */
function makeWorldReadable(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    if (entry.isDirectory()) chmodSync(path, 0o755);
    else if (entry.isFile()) chmodSync(path, 0o644);
  }
  chmodSync(dir, 0o755);
}

/** dockerOrder puts amd64 last: on an engine that loads every manifest.json entry, the last one keeps the tag. */
function dockerOrder(architecture: string | undefined): number {
  return architecture === "amd64" ? 1 : 0;
}

/** writeImageArchive names the image in the layout, adds manifest.json, and tars the layout reproducibly. */
export function writeImageArchive(options: ImageArchiveOptions): void {
  const indexDigest = nameImage(options.layout, options.tag, options.shortName, options.qualifiedName);
  const manifests = platformManifests(options.layout, indexDigest).sort((a, b) => dockerOrder(a.platform?.architecture) - dockerOrder(b.platform?.architecture));
  writeFileSync(join(options.layout, "manifest.json"), JSON.stringify(manifests.map((manifest) => dockerManifest(options.layout, manifest.digest, options.shortName))));
  makeWorldReadable(options.layout);
  writeReproducibleTar({ root: options.layout, file: options.file, mtime: options.mtime });
}
