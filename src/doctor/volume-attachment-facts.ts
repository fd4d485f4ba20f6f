import type { CsiNodeLookup } from "../controller/publication-resolution";
import { listedVolumeHandle, resolvePublication, type PersistentVolumeLookup, type VolumeResolution } from "../controller/publication-resolution";
import { errorMessage } from "../util/error-message";
import type { VolumeAttachmentFacts } from "./assess-volume-attachment";
import type { TimestampedVolumeAttachment } from "./timestamped-volume-attachment";

/**
 * factsOf gathers what the doctor judges a VA by: its status, timestamps,
 * the node ID and the driver's volume ID, each worked out by the
 * controller's own rules, so the doctor can never disagree with the
 * attacher about them: the node ID as a detach and the reconciler find it
 * (the node's CSINode entry for the driver, else the ID the attacher
 * remembered on the VA), the volume as every sync resolves it (CSI
 * migration included), and its handle as the reconciler compares it with
 * ListVolumes (a migrated or inline volume's repaired with the node ID).
 */
export function factsOf(va: TimestampedVolumeAttachment, pvs: PersistentVolumeLookup, csiNodes: CsiNodeLookup, driverName: string): VolumeAttachmentFacts {
  const deletionTimestamp = va.metadata.deletionTimestamp;
  const publication = resolvePublication(va, { pvs, csiNodes, driverName }, { remembered: true });
  const node: VolumeAttachmentFacts["node"] = publication.nodeId.ok ? { id: publication.nodeId.id } : { unknown: errorMessage(publication.nodeId.error) };
  return {
    name: va.metadata.name,
    nodeName: va.spec.nodeName,
    pvName: va.spec.source.persistentVolumeName ?? undefined,
    attached: va.status?.attached ?? false,
    attachError: va.status?.attachError?.message ?? undefined,
    detachError: va.status?.detachError?.message ?? undefined,
    createdAtMs: Date.parse(va.metadata.creationTimestamp),
    deletingSinceMs: deletionTimestamp ? Date.parse(deletionTimestamp) : undefined,
    volume: volumeOf(publication.volume, node),
    node,
  };
}

function volumeOf(resolution: VolumeResolution, node: VolumeAttachmentFacts["node"]): VolumeAttachmentFacts["volume"] {
  if (!resolution.ok) return { unknown: errorMessage(resolution.error) };
  // Without a node ID a migrated handle cannot be repaired: the driver could not be compared anyway.
  if (!("id" in node)) return { handle: resolution.volume.csi.volumeHandle };
  try {
    return { handle: listedVolumeHandle(resolution.volume, node.id) };
  } catch (e: unknown) {
    return { unknown: errorMessage(e) };
  }
}
