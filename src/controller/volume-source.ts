import { KubeApiError } from "../kube/errors";
import type { CsiPersistentVolumeSource, PersistentVolume, PersistentVolumeSpec } from "../kube/objects/persistent-volume";
import type { VolumeAttachment } from "../kube/objects/volume-attachment";
import type { Store } from "../kube/store";

/**
 * Where a VA's volume is described: a PV named in `spec.source`, or an
 * inline PV spec (CSI migration of inline volumes). Exactly one must be set.
 * Error texts are upstream's, so that operators' searches still match.
 */
export type VolumeSourceRef =
  | { readonly kind: "pv"; readonly pvName: string }
  | { readonly kind: "inline"; readonly spec: PersistentVolumeSpec };

export function volumeSourceOf(va: VolumeAttachment): VolumeSourceRef {
  const { persistentVolumeName, inlineVolumeSpec } = va.spec.source;
  if (persistentVolumeName) {
    if (inlineVolumeSpec) throw new Error("both InlineCSIVolumeSource and PersistentVolumeName specified in VA source");
    return { kind: "pv", pvName: persistentVolumeName };
  }
  if (inlineVolumeSpec) {
    if (!inlineVolumeSpec.csi) throw new Error("inline volume spec contains nil CSI source");
    return { kind: "inline", spec: inlineVolumeSpec };
  }
  throw new Error("neither InlineCSIVolumeSource nor PersistentVolumeName specified in VA source");
}

/** cachedPersistentVolume reads a PV from the store, failing with the lister's NotFound wording. */
export function cachedPersistentVolume(pvs: Store<PersistentVolume>, name: string): PersistentVolume {
  const pv = pvs.get(name);
  if (!pv) throw new KubeApiError(404, "NotFound", `persistentvolume ${JSON.stringify(name)} not found`);
  return pv;
}

/** csiSourceOf returns the spec's CSI source; in-tree sources must have been translated before. */
export function csiSourceOf(spec: PersistentVolumeSpec): CsiPersistentVolumeSource {
  if (!spec.csi) throw new Error("pv spec contained non-csi source that was not migrated");
  return spec.csi;
}
