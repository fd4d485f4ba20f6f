import { KubeApiError } from "../kube/errors";
import { nodeIdOf, type CsiNode } from "../kube/objects/csi-node";
import type { CsiPersistentVolumeSource, PersistentVolume, PersistentVolumeSpec } from "../kube/objects/persistent-volume";
import type { VolumeAttachment } from "../kube/objects/volume-attachment";
import { errorMessage } from "../util/error-message";
import { nodeIdAnnotation } from "./annotations";
import { isMigratable } from "./migration/in-tree-plugins";
import { repairVolumeHandle } from "./migration/repair-volume-handle";
import { translateInTreeSpecToCsi } from "./migration/translate-in-tree";

/** Where PVs are looked up by name: the PV store, or the doctor's snapshot. Nothing is written. */
export interface PersistentVolumeLookup {
  get(name: string): PersistentVolume | undefined;
}

/** ResolvedVolume is what a VA's driver calls are built from. */
export interface ResolvedVolume {
  /** The PV's spec (an in-tree PV's translated to CSI), or the inline spec. */
  readonly spec: PersistentVolumeSpec;
  /** `spec.csi`, present by construction. */
  readonly csi: CsiPersistentVolumeSource;
  /** Where the spec came from: a PV named in `spec.source`, or the VA's inline spec. */
  readonly origin: "pv" | "inline";
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
 * predicates such as isNotFound see exactly what the step threw. `pv` is the
 * PV the VA names whenever it was found, even when a later step failed:
 * attach puts our finalizer on it before it reports a failed translation, as
 * upstream does.
 */
export type VolumeResolution =
  | { readonly ok: true; readonly volume: ResolvedVolume; readonly pv?: PersistentVolume }
  | { readonly ok: false; readonly step: ResolutionStep; readonly error: unknown; readonly pv?: PersistentVolume };

/**
 * resolveVolume answers "which volume does this VA name", the volume half
 * of resolvePublication, through which every caller asks: the VA's source
 * (exactly one of a PV name and an inline spec), its PV from `pvs`, an
 * in-tree PV translated to CSI (CSI migration), and the CSI source. Error
 * texts are upstream's, so operators' searches still match.
 */
function resolveVolume(va: VolumeAttachment, pvs: PersistentVolumeLookup): VolumeResolution {
  const { persistentVolumeName, inlineVolumeSpec } = va.spec.source;
  if (persistentVolumeName && inlineVolumeSpec) return failedAt("pv-spec", "both InlineCSIVolumeSource and PersistentVolumeName specified in VA source");
  if (inlineVolumeSpec) {
    const csi = inlineVolumeSpec.csi;
    if (!csi) return failedAt("pv-spec", "inline volume spec contains nil CSI source");
    return { ok: true, volume: { spec: inlineVolumeSpec, csi, origin: "inline", migrated: false } };
  }
  if (!persistentVolumeName) return failedAt("pv-spec", "neither InlineCSIVolumeSource nor PersistentVolumeName specified in VA source");
  const pv = pvs.get(persistentVolumeName);
  // The lister's NotFound wording, which operators know from upstream.
  if (!pv) return { ok: false, step: "pv-spec", error: new KubeApiError(404, "NotFound", `persistentvolume ${JSON.stringify(persistentVolumeName)} not found`) };
  return resolvePersistentVolume(pv);
}

/**
 * resolvePersistentVolume is resolveVolume's answer for a PV already in
 * hand: its spec (an in-tree PV translated to CSI) and CSI source. The
 * recovery of a publish no VA names any more starts from the PV.
 */
export function resolvePersistentVolume(pv: PersistentVolume): VolumeResolution {
  // An in-tree PV is translated as upstream's csiAttach and csiDetach do
  // after IsPVMigratable; any other PV is used as it is.
  const migrated = isMigratable(pv.spec);
  let spec = pv.spec;
  if (migrated) {
    try {
      spec = translateInTreeSpecToCsi(pv.spec, { name: pv.metadata.name, labels: pv.metadata.labels, annotations: pv.metadata.annotations });
    } catch (e: unknown) {
      return { ok: false, step: "pv-spec", error: new Error(`failed to translate in tree pv to CSI: ${errorMessage(e)}`, { cause: e }), pv };
    }
  }
  if (!spec.csi) return { ok: false, step: "csi-source", error: new Error("pv spec contained non-csi source that was not migrated"), pv };
  return { ok: true, volume: { spec, csi: spec.csi, origin: "pv", migrated }, pv };
}

/** Where CSINodes are looked up by node name: the CSINode store, or the doctor's snapshot. */
export interface CsiNodeLookup {
  get(nodeName: string): CsiNode | undefined;
}

/**
 * nodeIdFor finds the ID `driver` registered for node `nodeName` in that
 * node's CSINode. With `fallbackVa` (detach only), a missing CSINode or
 * driver entry falls back to the ID remembered on the VA: a node that was
 * deleted, or whose driver pod is down, must still be detachable. Attach
 * never falls back: publishing to a node the driver does not know is wrong.
 */
function nodeIdFor(csiNodes: CsiNodeLookup, driver: string, nodeName: string, fallbackVa?: VolumeAttachment): string {
  let error: Error;
  const csiNode = csiNodes.get(nodeName);
  if (csiNode) {
    const nodeId = nodeIdOf(csiNode, driver);
    if (nodeId !== undefined) return nodeId;
    error = new Error(`CSINode ${nodeName} does not contain driver ${driver}`);
  } else {
    // The lister's NotFound wording, which operators know from upstream.
    error = new KubeApiError(404, "NotFound", `csinode.storage.k8s.io ${JSON.stringify(nodeName)} not found`);
  }
  const remembered = fallbackVa?.metadata.annotations?.[nodeIdAnnotation];
  if (remembered !== undefined) return remembered;
  throw error;
}

/** Where a publication is looked up: PVs, CSINodes, and our driver's name (its CSINode entries are ours). */
export interface PublicationLookups {
  readonly pvs: PersistentVolumeLookup;
  readonly csiNodes: CsiNodeLookup;
  readonly driverName: string;
}

/** NodeIdResolution is the node ID a VA's volume is published to, or why it is not known. */
export type NodeIdResolution = { readonly ok: true; readonly id: string } | { readonly ok: false; readonly error: unknown };

/** Publication is what every driver call about a VA is built from: its volume and its node ID, each resolved or failed. */
export interface Publication {
  readonly volume: VolumeResolution;
  readonly nodeId: NodeIdResolution;
}

/**
 * resolvePublication answers "which volume does this VA name, and on which
 * node ID", the one entry for attach, detach, the reconciler and the doctor.
 * Both halves are answered, each failing on its own, so that each caller
 * reports them in upstream's order (attach puts the PV finalizer on before
 * a missing node ID fails it; the reconciler names the node ID first). With
 * `remembered`, a node whose CSINode or driver entry is gone falls back to
 * the ID remembered on the VA (detach, reconciler, doctor); attach never
 * does: publishing to a node the driver did not register is wrong.
 */
export function resolvePublication(va: VolumeAttachment, lookups: PublicationLookups, options: { readonly remembered: boolean }): Publication {
  const volume = resolveVolume(va, lookups.pvs);
  try {
    return { volume, nodeId: { ok: true, id: nodeIdFor(lookups.csiNodes, lookups.driverName, va.spec.nodeName, options.remembered ? va : undefined) } };
  } catch (error: unknown) {
    return { volume, nodeId: { ok: false, error } };
  }
}

/**
 * listedVolumeHandle is the volume's handle as the driver's ListVolumes
 * reports it, for the reconciler and the doctor to compare with: a migrated
 * volume's handle is repaired with the node ID (GCE PD fills in its project
 * and zone). Upstream counts every inline spec as migrated here (its
 * isMigratable in ReconcileVA): the A/D controller only puts one on a VA for
 * an in-tree inline volume under migration, so its handle is repaired too.
 * Throws for an inline spec of a driver that replaces no in-tree plugin.
 */
export function listedVolumeHandle(volume: ResolvedVolume, nodeId: string): string {
  const { csi } = volume;
  if (!volume.migrated && volume.origin !== "inline") return csi.volumeHandle;
  return repairVolumeHandle(csi.driver, csi.volumeHandle, nodeId);
}

function failedAt(step: ResolutionStep, message: string): VolumeResolution {
  return { ok: false, step, error: new Error(message) };
}
