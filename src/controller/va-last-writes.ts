import type { VolumeAttachment } from "../kube/objects/volume-attachment";
import { isNewerResourceVersion, type Store } from "../kube/store";

/**
 * LastVolumeAttachmentWrites remembers, per VA, the resourceVersion the API
 * server answered our last write with, for as long as the VA cache does not
 * show that write yet. The reconciler asks it (see
 * settled-volume-attachment.ts): a VA whose cached state predates our own
 * write is still in flight, and comparing that state with the driver would
 * undo the write's work.
 *
 * With kube-apiserver's integer resourceVersions the cache shows every write
 * the moment it returns (AttacherApi applies the answer to the store), so
 * nothing is kept. An opaque resourceVersion cannot be ordered: the answer is
 * then kept until the watch delivers an object of exactly that version, and
 * whatever the watch delivers after it is newer.
 *
 * Invariant: a name is here only while the VA cache holds a VA of that name
 * and does not show the recorded version; the cache's own events drop the
 * entry (the version delivered, or the VA deleted). So the map holds at most
 * the writes in flight, and never outgrows the cache.
 */
export class LastVolumeAttachmentWrites {
  private readonly versions = new Map<string, string>();

  constructor(private readonly vas: Store<VolumeAttachment>) {
    const delivered = (va: VolumeAttachment) => {
      if (this.versions.get(va.metadata.name) === va.metadata.resourceVersion) this.versions.delete(va.metadata.name);
    };
    vas.addHandlers({
      onAdd: delivered,
      onUpdate: (_old, va) => delivered(va),
      onDelete: (va) => this.versions.delete(va.metadata.name),
    });
  }

  /** record notes the VA the API server answered one of our writes with; the VA writer calls it after every write. */
  record(written: VolumeAttachment): void {
    const name = written.metadata.name;
    const cached = this.vas.get(name);
    // Gone from the cache: its DELETED event beat our write's answer (as when
    // removing the last finalizer deletes the VA); nothing is left to observe.
    // Showing the write (or a newer version): it is observed already.
    if (cached === undefined || observes(cached.metadata.resourceVersion, written.metadata.resourceVersion)) {
      this.versions.delete(name);
      return;
    }
    this.versions.set(name, written.metadata.resourceVersion);
  }

  /** versionOf answers the resourceVersion of our last write to the VA named `name` that its cache entry does not show yet, if any. */
  versionOf(name: string): string | undefined {
    return this.versions.get(name);
  }
}

/**
 * observes: an object at `cachedVersion` shows a write answered with
 * `writtenVersion`. Equal versions always do; a newer one does only when
 * both are integers (see isNewerResourceVersion), since opaque versions
 * cannot be ordered.
 */
export function observes(cachedVersion: string, writtenVersion: string): boolean {
  return cachedVersion === writtenVersion || isNewerResourceVersion(cachedVersion, writtenVersion);
}
