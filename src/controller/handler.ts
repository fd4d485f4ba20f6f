import type { PersistentVolume } from "../kube/objects/persistent-volume";
import type { VolumeAttachment } from "../kube/objects/volume-attachment";

/**
 * Handler is what the AttachController calls for each dequeued object. The
 * CSI handler attaches through the driver; the trivial handler serves drivers
 * without ControllerPublish. A sync resolves on success and throws to be
 * retried with back-off.
 */
export interface Handler {
  syncVolumeAttachment(va: VolumeAttachment): Promise<void>;
  syncPersistentVolume(pv: PersistentVolume): Promise<void>;
}
