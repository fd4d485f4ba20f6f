import type { PersistentVolume } from "../kube/objects/persistent-volume";
import type { VolumeAttachment } from "../kube/objects/volume-attachment";

/**
 * Handler is what the AttachController hands each dequeued name to, as
 * upstream's Handler (SyncNewOrUpdatedVolumeAttachment,
 * SyncNewOrUpdatedPersistentVolume). The CSI handler attaches through the
 * driver; the trivial handler serves drivers without ControllerPublish. A
 * sync resolves on success and throws to be retried with back-off. The rules
 * live here; the controller only routes.
 */
export interface Handler {
  /**
   * start is called once the caches hold their first lists, before any
   * worker runs: a leader notes there what it inherited from the time no
   * replica of it watched.
   */
  start(): void;
  /**
   * syncVolumeAttachment is the sync of one queued VA name: `va` is the
   * cached VA of our driver, or undefined when the cache no longer has that
   * name. Resolves with the name of a PV whose finalizer its work may have
   * released, for the PV queue.
   */
  syncVolumeAttachment(name: string, va: VolumeAttachment | undefined): Promise<string | undefined>;
  /** syncPersistentVolume removes our finalizer from a PV that no longer needs it (see pvNeedsSync). */
  syncPersistentVolume(pv: PersistentVolume): Promise<void>;
}
