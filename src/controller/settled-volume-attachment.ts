import { observes } from "../kube/store";

/** VolumeAttachmentProgress is what the reconciler knows of one VA once the driver's listing is in hand. */
export interface VolumeAttachmentProgress {
  /** The VA's name waits in the VA queue or a worker holds it (WorkQueue.queuedOrProcessing). */
  readonly queuedOrProcessing: boolean;
  /** resourceVersion of the VA the pass compared with the listing; the pass took it before asking the driver. */
  readonly comparedVersion: string;
  /** resourceVersion of the VA the cache holds now; undefined when it is gone. */
  readonly cachedVersion: string | undefined;
  /** resourceVersion our last write to the VA returned while the cache did not show it yet (Store.unobservedOwnWrite), if any. */
  readonly unobservedWriteVersion: string | undefined;
}

/**
 * isSettled is the reconciler's rule for when a disagreement between a VA's
 * `status.attached` and the driver's published nodes is drift worth a forced
 * sync: only when no work on the VA is under way or owed. A VA is settled
 * when
 * - its name is neither queued nor held by a worker: a worker between
 *   ControllerPublish and the `attached: true` write (which may wait
 *   seconds in the client's rate limiter) holds a VA whose status still
 *   says detached, and a queued VA is about to be synced anyway;
 * - the cache still holds the version the pass compared: a VA that changed
 *   while the driver was being listed may have been attached or detached in
 *   between, so the listing and the VA may describe different moments;
 * - the cache shows our own last write to it.
 * Anything else is in flight and left to the worker that owns it; a real
 * drift is still there at the next pass, when the VA has settled.
 */
export function isSettled(progress: VolumeAttachmentProgress): boolean {
  const { queuedOrProcessing, comparedVersion, cachedVersion, unobservedWriteVersion } = progress;
  if (queuedOrProcessing) return false;
  if (cachedVersion !== comparedVersion) return false;
  return unobservedWriteVersion === undefined || observes(cachedVersion, unobservedWriteVersion);
}
