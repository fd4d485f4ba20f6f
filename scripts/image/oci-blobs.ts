/**
 * Reading and writing the blobs of an OCI image layout: content-addressed
 * files under blobs/sha256/, named by the sha256 of their bytes, and the
 * descriptors (media type, digest, size) that point at them.
 */
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { ImageBuildError } from "./errors";

export const descriptorSchema = v.object({
  mediaType: v.string(),
  digest: v.pipe(v.string(), v.regex(/^sha256:[0-9a-f]{64}$/)),
  size: v.number(),
  annotations: v.optional(v.record(v.string(), v.string())),
  platform: v.optional(v.object({ architecture: v.string(), os: v.string() })),
});

/** Descriptor points at one blob. */
export type Descriptor = v.InferOutput<typeof descriptorSchema>;

export const indexSchema = v.looseObject({ manifests: v.array(descriptorSchema) });
export const manifestSchema = v.looseObject({ config: descriptorSchema, layers: v.array(descriptorSchema) });
export const configSchema = v.looseObject({ architecture: v.string(), os: v.string() });

/** The media types of what the layout holds above the layers. */
export const mediaTypes = { index: "application/vnd.oci.image.index.v1+json", manifest: "application/vnd.oci.image.manifest.v1+json" } as const;

/** blobPath is where a layout stores the blob of `digest`, relative to the layout. */
export function blobPath(digest: string): string {
  return `blobs/${digest.replace(":", "/")}`;
}

/** readJson reads and checks one JSON file of the layout. */
export function readJson<T extends v.GenericSchema>(schema: T, path: string): v.InferOutput<T> {
  const result = v.safeParse(schema, JSON.parse(readFileSync(path, "utf8")));
  if (!result.success) throw new ImageBuildError(`${path} is not what an OCI layout holds: ${v.getDotPath(result.issues[0]) ?? ""} ${result.issues[0].message}`);
  return result.output;
}

/** writeJsonBlob stores `value` as a blob (compact JSON, keys in the order given) and returns its descriptor. */
export function writeJsonBlob(layout: string, mediaType: string, value: unknown): Descriptor {
  const bytes = Buffer.from(JSON.stringify(value));
  const digest = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
  writeFileSync(join(layout, blobPath(digest)), bytes);
  return { mediaType, digest, size: bytes.length };
}
