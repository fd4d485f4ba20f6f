import type { PersistentVolume, PersistentVolumeSpec } from "../../kube/objects/persistent-volume";
import { errorMessage } from "../../util/error-message";
import { isMigratable } from "./in-tree-plugins";
import { translateInTreeSpecToCsi } from "./translate-in-tree";

/** MigratedSpec is the spec a publish or unpublish request is built from, and whether CSI migration produced it. */
export interface MigratedSpec {
  readonly spec: PersistentVolumeSpec;
  /** True for a translated in-tree PV: its calls are counted with `migrated="true"`. */
  readonly migrated: boolean;
}

/**
 * migratedSpecOf returns a PV's spec ready for the CSI driver: an in-tree PV
 * translated to its CSI source (as upstream's csiAttach and csiDetach do
 * after IsPVMigratable), any other PV as it is. A translation failure is
 * worded as upstream's, `failed to translate in tree pv to CSI: ...`, which
 * is what lands in the VA's attachError or detachError.
 */
export function migratedSpecOf(pv: PersistentVolume): MigratedSpec {
  if (!isMigratable(pv.spec)) return { spec: pv.spec, migrated: false };
  try {
    const spec = translateInTreeSpecToCsi(pv.spec, {
      name: pv.metadata.name,
      labels: pv.metadata.labels,
      annotations: pv.metadata.annotations,
    });
    return { spec, migrated: true };
  } catch (e: unknown) {
    throw new Error(`failed to translate in tree pv to CSI: ${errorMessage(e)}`, { cause: e });
  }
}
