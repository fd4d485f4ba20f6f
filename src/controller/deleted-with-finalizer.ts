import type { VolumeAttachment } from "../kube/objects/volume-attachment";

/**
 * DeletedWithFinalizer keeps the last state of each of our VAs that
 * vanished from the API while it still carried our finalizer and had never
 * been marked for deletion, until its volume has been unpublished.
 *
 * A finalizer should make that impossible, but kube-apiserver's DELETE can
 * hard-delete an object whose finalizer was added concurrently
 * (kubernetes/kubernetes#77988, still open in v1.36): the VA is gone while
 * its volume is, or is about to be, published. Upstream's attacher then
 * leaks the publish; we unpublish from the state kept here. A VA also lands
 * here when a relist finds it gone while our cache still showed our
 * finalizer; unpublishing is idempotent, so a second unpublish of a volume
 * already released costs one call.
 *
 * Entries are few (each is a race lost), so finding the ones naming a PV
 * scans them all.
 */
export class DeletedWithFinalizer {
  private readonly byName = new Map<string, VolumeAttachment>();

  remember(va: VolumeAttachment): void {
    this.byName.set(va.metadata.name, va);
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
