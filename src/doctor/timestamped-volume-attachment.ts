import * as v from "valibot";
import { objectMetaSchema, objectParser } from "../kube/objects/object-meta";
import { volumeAttachmentSchema } from "../kube/objects/volume-attachment";

/**
 * The attacher's slim VolumeAttachment plus `metadata.creationTimestamp`,
 * which the doctor needs for the AGE column and the attacher's caches do
 * not keep (one more string per cached object for nothing).
 */
export const timestampedVolumeAttachmentSchema = v.object({
  ...volumeAttachmentSchema.entries,
  metadata: v.object({ ...objectMetaSchema.entries, creationTimestamp: v.string() }),
});

export type TimestampedVolumeAttachment = v.InferOutput<typeof timestampedVolumeAttachmentSchema>;

/** parseTimestampedVolumeAttachment validates a VA from the API, naming it when a field is bad. */
export const parseTimestampedVolumeAttachment: (raw: unknown) => TimestampedVolumeAttachment = objectParser("VolumeAttachment", timestampedVolumeAttachmentSchema);
