import * as v from "valibot";
import { objectMetaSchema, objectParser } from "./object-meta";

/** Where the API keeps PersistentVolumes. */
export const persistentVolumesPath = "/api/v1/persistentvolumes";

export const secretReferenceSchema = v.object({
  name: v.optional(v.string(), ""),
  namespace: v.optional(v.string(), ""),
});

export type SecretReference = v.InferOutput<typeof secretReferenceSchema>;

/** The CSI source of a PV spec: what ControllerPublishVolume is built from. */
export const csiPersistentVolumeSourceSchema = v.object({
  driver: v.string(),
  volumeHandle: v.string(),
  readOnly: v.optional(v.boolean(), false),
  fsType: v.optional(v.string(), ""),
  volumeAttributes: v.optional(v.nullable(v.record(v.string(), v.string()))),
  controllerPublishSecretRef: v.optional(v.nullable(secretReferenceSchema)),
});

export type CsiPersistentVolumeSource = v.InferOutput<typeof csiPersistentVolumeSourceSchema>;

// In-tree sources are kept whole (they are small) so that CSI migration can
// translate them; the attacher reads no other volume source.
const inTreeSource = v.optional(v.nullable(v.record(v.string(), v.unknown())));

/**
 * The slice of a PersistentVolumeSpec the attacher reads; also the shape of
 * a VolumeAttachment's `inlineVolumeSpec`.
 */
export const persistentVolumeSpecSchema = v.object({
  csi: v.optional(v.nullable(csiPersistentVolumeSourceSchema)),
  accessModes: v.optional(v.nullable(v.pipe(v.array(v.string()), v.readonly()))),
  volumeMode: v.optional(v.nullable(v.string())),
  mountOptions: v.optional(v.nullable(v.array(v.string()))),
  awsElasticBlockStore: inTreeSource,
  gcePersistentDisk: inTreeSource,
  azureDisk: inTreeSource,
  cinder: inTreeSource,
  vsphereVolume: inTreeSource,
  portworxVolume: inTreeSource,
});

export type PersistentVolumeSpec = v.InferOutput<typeof persistentVolumeSpecSchema>;

/**
 * A PV's metadata: the slim ObjectMeta plus its labels, which CSI migration
 * reads (a GCE PD's zone is in `topology.kubernetes.io/zone`). Only PVs keep
 * labels; VAs and CSINodes do not need them.
 */
export const persistentVolumeMetaSchema = v.object({
  ...objectMetaSchema.entries,
  labels: v.optional(v.nullable(v.record(v.string(), v.string()))),
});

export const persistentVolumeSchema = v.object({
  metadata: persistentVolumeMetaSchema,
  spec: v.optional(persistentVolumeSpecSchema, {}),
});

export type PersistentVolume = v.InferOutput<typeof persistentVolumeSchema>;

export const parsePersistentVolume: (raw: unknown) => PersistentVolume = objectParser("PersistentVolume", persistentVolumeSchema);
