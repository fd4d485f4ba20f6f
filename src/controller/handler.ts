import type { PersistentVolume } from "../kube/objects/persistent-volume";
import type { VolumeAttachment } from "../kube/objects/volume-attachment";

/**
 * Handler is what the AttachController calls: for each dequeued object a
 * sync, and for each PV event the question whether that PV needs one. The
 * CSI handler attaches through the driver; the trivial handler serves drivers
 * without ControllerPublish. A sync resolves on success and throws to be
 * retried with back-off. The rules live here; the controller only routes.
 */
export interface Handler {
  syncVolumeAttachment(va: VolumeAttachment): Promise<void>;
  /**
   * noteDeletedVolumeAttachment is told of every VA deleted from the API
   * and answers whether its name should still go on the VA queue: one that
   * vanished still carrying our finalizer owes an unpublish.
   */
  noteDeletedVolumeAttachment(va: VolumeAttachment): boolean;
  /**
   * syncDeletedVolumeAttachment is the sync of a queued name the VA cache no
   * longer has. It resolves with the name of a PV whose finalizer may now
   * go, if its work released one.
   */
  syncDeletedVolumeAttachment(name: string): Promise<string | undefined>;
  /** pvNeedsSync answers, for a PV event, whether the PV should go on the PV queue. */
  pvNeedsSync(pv: PersistentVolume): boolean;
  syncPersistentVolume(pv: PersistentVolume): Promise<void>;
}
