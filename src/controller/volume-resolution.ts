import type { CsiPersistentVolumeSource, PersistentVolume, PersistentVolumeSpec } from "../kube/objects/persistent-volume";
import type { VolumeAttachment } from "../kube/objects/volume-attachment";
import type { Store } from "../kube/store";
import { migratedSpecOf, type MigratedSpec } from "./migration/migrated-spec";
import { cachedPersistentVolume, csiSourceOf, volumeSourceOf } from "./volume-source";

/**
 * FoundVolume is a VA's volume as found, before translation: its PV (from
 * the cache, or as a write returned it) or its inline spec.
 */
export type FoundVolume = { readonly kind: "pv"; readonly pv: PersistentVolume } | { readonly kind: "inline"; readonly spec: PersistentVolumeSpec };

/** ResolvedVolume is what a VA's driver calls are built from. */
export interface ResolvedVolume {
  /** The PV's spec (an in-tree PV's translated to CSI), or the inline spec. */
  readonly spec: PersistentVolumeSpec;
  /** `spec.csi`, present by construction. */
  readonly csi: CsiPersistentVolumeSource;
  /** Where the spec came from. */
  readonly origin: FoundVolume["kind"];
  /**
   * True only for an in-tree PV translated to CSI, as upstream's csiAttach and
   * csiDetach count it. An inline spec is not marked here: whether it counts
   * as migrated is the caller's call (the reconciler says yes, the handler no).
   */
  readonly migrated: boolean;
}

/**
 * ResolutionStep names the step a resolution failed at, after upstream's
 * getProcessedPVSpec (`pv-spec`: the VA's source, its PV, the in-tree
 * translation) and getCSISource (`csi-source`: a spec with no CSI source),
 * so the reconciler can log each failure in upstream's words.
 */
export type ResolutionStep = "pv-spec" | "csi-source";

/**
 * VolumeResolution is a resolved volume, or the step that failed and what it
 * threw, untouched: the handler rethrows it, so the VA's error text and
 * predicates such as isNotFound see exactly what the step threw.
 */
export type VolumeResolution =
  | { readonly ok: true; readonly volume: ResolvedVolume }
  | { readonly ok: false; readonly step: ResolutionStep; readonly error: unknown };

/**
 * resolveVolume finds which volume a VA refers to, from the PV cache only
 * (nothing is written): its PV or inline spec, an in-tree PV translated to
 * CSI, and the CSI source. Used by detach and by the reconciler; attach
 * writes the PV finalizer between finding and translating, so it calls
 * foundVolumeOf and resolveFoundVolume itself.
 */
export function resolveVolume(va: VolumeAttachment, pvs: Store<PersistentVolume>): VolumeResolution {
  let found: FoundVolume;
  try {
    found = foundVolumeOf(va, pvs);
  } catch (error: unknown) {
    return { ok: false, step: "pv-spec", error };
  }
  return resolveFoundVolume(found);
}

/**
 * foundVolumeOf reads the VA's source and its PV from the cache, throwing
 * upstream's words for a malformed source and the lister's NotFound for a
 * PV that is not cached.
 */
export function foundVolumeOf(va: VolumeAttachment, pvs: Store<PersistentVolume>): FoundVolume {
  const ref = volumeSourceOf(va);
  return ref.kind === "inline" ? ref : { kind: "pv", pv: cachedPersistentVolume(pvs, ref.pvName) };
}

/** resolveFoundVolume translates an in-tree PV to CSI (an inline spec is CSI already) and takes the CSI source. */
export function resolveFoundVolume(found: FoundVolume): VolumeResolution {
  if (found.kind === "inline") return withCsiSource(found.spec, "inline", false);
  let migrated: MigratedSpec;
  try {
    migrated = migratedSpecOf(found.pv);
  } catch (error: unknown) {
    return { ok: false, step: "pv-spec", error };
  }
  return withCsiSource(migrated.spec, "pv", migrated.migrated);
}

function withCsiSource(spec: PersistentVolumeSpec, origin: FoundVolume["kind"], migrated: boolean): VolumeResolution {
  try {
    return { ok: true, volume: { spec, csi: csiSourceOf(spec), origin, migrated } };
  } catch (error: unknown) {
    return { ok: false, step: "csi-source", error };
  }
}
