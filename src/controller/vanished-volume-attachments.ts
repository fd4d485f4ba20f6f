import type { VolumeAttachment } from "../kube/objects/volume-attachment";
import type { Logger } from "../log/logger";
import { carriesOurFinalizer } from "./our-finalizer";

export interface VanishedVolumeAttachmentsOptions {
  /** Our driver's name: only its VAs, and only with its finalizer, are kept. */
  readonly driverName: string;
  readonly log: Logger;
}

/**
 * VanishedVolumeAttachments keeps the last state of each of our VAs that
 * vanished from the API while it still carried our finalizer and had never
 * been marked for deletion, until its volume has been unpublished.
 *
 * A finalizer should make that impossible, but kube-apiserver's DELETE can
 * hard-delete an object whose finalizer was added concurrently
 * (kubernetes/kubernetes#77988, still open in v1.36): the VA is gone while
 * its volume is, or is about to be, published. Upstream's attacher then
 * leaks the publish; the CSI handler unpublishes from the state kept here,
 * in the sync of the VA's PV (or, for an inline volume, of its own name). A
 * VA also lands here when a relist finds it gone while our cache still
 * showed our finalizer; unpublishing is idempotent, so a second unpublish of
 * a volume already released costs one call.
 *
 * Invariant: an entry is added only by `note` (the attach controller, on a
 * DELETED event) and removed only by `forget` (the CSI handler, once the
 * volume is unpublished or a VA of ours on the same node took the publish
 * over; see PublicationRecovery).
 * Entries are few (each is a race lost), so finding the ones naming a PV
 * scans them all.
 */
export class VanishedVolumeAttachments {
  private readonly byName = new Map<string, VolumeAttachment>();

  constructor(private readonly options: VanishedVolumeAttachmentsOptions) {}

  /**
   * note is told of every VA the API deleted and answers whether its name
   * must go on the VA queue. One of ours that carried our finalizer but was
   * never marked for deletion vanished without a detach: it is kept, since
   * its volume may be published and only we can release it. The normal end
   * of a VA is not that: its last state has a deletionTimestamp, and still
   * shows our finalizer, because kube-apiserver deletes the object instead
   * of storing the update that removed its last finalizer, and the watch
   * sends the last stored state.
   */
  note(va: VolumeAttachment): boolean {
    if (va.spec.attacher !== this.options.driverName) return false;
    if (this.byName.has(va.metadata.name)) return true;
    if (!carriesOurFinalizer(va, this.options.driverName) || va.metadata.deletionTimestamp) return false;
    this.byName.set(va.metadata.name, va);
    this.options.log.warn("VolumeAttachment vanished while it still carried our finalizer; unpublishing its volume from its last known state", {
      va: va.metadata.name,
      node: va.spec.nodeName,
    });
    return true;
  }

  get(name: string): VolumeAttachment | undefined {
    return this.byName.get(name);
  }

  forget(name: string): void {
    this.byName.delete(name);
  }

  /** namingPv lists the names of the kept VAs whose source is the PV `pvName`. */
  namingPv(pvName: string): string[] {
    return [...this.byName.values()].filter((va) => va.spec.source.persistentVolumeName === pvName).map((va) => va.metadata.name);
  }
}
