import * as v from "valibot";
import { objectMetaSchema, objectParser } from "./object-meta";
import { persistentVolumeSpecSchema } from "./persistent-volume";

/** Where the API keeps VolumeAttachments (cluster-scoped). */
export const volumeAttachmentsPath = "/apis/storage.k8s.io/v1/volumeattachments";

const volumeErrorSchema = v.object({
  message: v.optional(v.string()),
  time: v.optional(v.string()),
  errorCode: v.optional(v.number()),
});

export type VolumeError = v.InferOutput<typeof volumeErrorSchema>;

export const volumeAttachmentSchema = v.object({
  metadata: objectMetaSchema,
  spec: v.object({
    attacher: v.string(),
    nodeName: v.string(),
    source: v.object({
      persistentVolumeName: v.optional(v.nullable(v.string())),
      inlineVolumeSpec: v.optional(v.nullable(persistentVolumeSpecSchema)),
    }),
  }),
  status: v.optional(
    v.object({
      attached: v.optional(v.boolean(), false),
      attachmentMetadata: v.optional(v.nullable(v.record(v.string(), v.string()))),
      attachError: v.optional(v.nullable(volumeErrorSchema)),
      detachError: v.optional(v.nullable(volumeErrorSchema)),
    }),
  ),
});

export type VolumeAttachment = v.InferOutput<typeof volumeAttachmentSchema>;

export const parseVolumeAttachment: (raw: unknown) => VolumeAttachment = objectParser("VolumeAttachment", volumeAttachmentSchema);
