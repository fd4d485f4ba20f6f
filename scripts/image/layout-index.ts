/**
 * index.json, the entry point of an OCI image layout: its entries are the
 * images the layout holds, each named by its ref.name annotation (umoci's
 * tag). umoci writes it first; platform-index.ts then makes it name the one
 * platform index, and image-archive.ts adds the names a loader looks for.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { indexSchema, mediaTypes, readJson, type Descriptor } from "./oci-blobs";

/** The annotation that names (tags) an entry of index.json; skopeo's `oci-archive:FILE:NAME` looks it up too. */
export const refNameAnnotation = "org.opencontainers.image.ref.name";

/** LayoutIndex is index.json as read, with the path it came from for messages. */
export interface LayoutIndex {
  readonly path: string;
  readonly manifests: readonly Descriptor[];
}

/** readLayoutIndex reads and checks the index.json of `layout`. */
export function readLayoutIndex(layout: string): LayoutIndex {
  const path = join(layout, "index.json");
  return { path, manifests: readJson(indexSchema, path).manifests };
}

/** taggedEntry is the entry of `index` tagged `tag`, if there is one. */
export function taggedEntry(index: LayoutIndex, tag: string): Descriptor | undefined {
  return index.manifests.find((descriptor) => descriptor.annotations?.[refNameAnnotation] === tag);
}

/** writeLayoutIndex makes `entry` the one image of the layout's index.json. */
export function writeLayoutIndex(layout: string, entry: Descriptor): void {
  writeFileSync(join(layout, "index.json"), JSON.stringify({ schemaVersion: 2, mediaType: mediaTypes.index, manifests: [entry] }));
}
