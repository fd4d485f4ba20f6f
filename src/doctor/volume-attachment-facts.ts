import { nodeIdAnnotation } from "../controller/driver-names";
import { migratedSpecOf } from "../controller/migration/migrated-spec";
import { repairVolumeHandle } from "../controller/migration/repair-volume-handle";
import type { PersistentVolume, PersistentVolumeSpec } from "../kube/objects/persistent-volume";
import { errorMessage } from "../util/error-message";
import type { VolumeAttachmentFacts } from "./assess-volume-attachment";
import type { TimestampedVolumeAttachment } from "./timestamped-volume-attachment";

/**
 * factsOf gathers what the doctor judges a VA by: its status, timestamps,
 * the driver's volume ID (through CSI migration for in-tree PVs, repaired
 * with the node ID as the reconciler does, so that it reads as ListVolumes
 * lists it) and the node ID (the node's CSINode entry for the
 * driver, else the ID the attacher remembered on the VA).
 */
export function factsOf(
  va: TimestampedVolumeAttachment,
  pvs: ReadonlyMap<string, PersistentVolume>,
  nodeIds: ReadonlyMap<string, string>,
): VolumeAttachmentFacts {
  const pvName = va.spec.source.persistentVolumeName ?? undefined;
  const nodeId = nodeIds.get(va.spec.nodeName) ?? va.metadata.annotations?.[nodeIdAnnotation];
  const deletionTimestamp = va.metadata.deletionTimestamp;
  return {
    name: va.metadata.name,
    nodeName: va.spec.nodeName,
    pvName,
    attached: va.status?.attached ?? false,
    attachError: va.status?.attachError?.message ?? undefined,
    detachError: va.status?.detachError?.message ?? undefined,
    createdAtMs: Date.parse(va.metadata.creationTimestamp),
    deletingSinceMs: deletionTimestamp ? Date.parse(deletionTimestamp) : undefined,
    volume: volumeOf(va, pvName, pvs, nodeId),
    node: nodeId !== undefined ? { id: nodeId } : { unknown: `no node ID for node ${va.spec.nodeName}: its CSINode does not list the driver` },
  };
}

function volumeOf(
  va: TimestampedVolumeAttachment,
  pvName: string | undefined,
  pvs: ReadonlyMap<string, PersistentVolume>,
  nodeId: string | undefined,
): { handle: string } | { unknown: string } {
  if (pvName !== undefined) {
    const pv = pvs.get(pvName);
    if (pv === undefined) return { unknown: `PV ${pvName} not found` };
    return handleOf(pv, nodeId);
  }
  const inline = va.spec.source.inlineVolumeSpec;
  if (!inline) return { unknown: "the VA names no volume" };
  return handleOf({ metadata: { name: va.metadata.name, resourceVersion: "" }, spec: inline }, nodeId);
}

function handleOf(pv: { metadata: PersistentVolume["metadata"]; spec: PersistentVolumeSpec }, nodeId: string | undefined): { handle: string } | { unknown: string } {
  try {
    const { spec, migrated } = migratedSpecOf(pv);
    const csi = spec.csi;
    if (!csi?.volumeHandle) return { unknown: `PV ${pv.metadata.name} has no CSI volume handle` };
    // A migrated GCE PD handle says projects/UNSPECIFIED until the node ID fills it in.
    if (migrated && nodeId !== undefined) return { handle: repairVolumeHandle(csi.driver, csi.volumeHandle, nodeId) };
    return { handle: csi.volumeHandle };
  } catch (e: unknown) {
    return { unknown: errorMessage(e) };
  }
}
