import type { PersistentVolume } from "../kube/objects/persistent-volume";
import type { VolumeAttachment } from "../kube/objects/volume-attachment";
import type { Logger } from "../log/logger";
import type { Handler } from "./handler";
import type { VolumeAttachmentWriter } from "./va-writer";

/**
 * TrivialHandler serves drivers that have no ControllerPublishVolume: there is
 * nothing to attach, so every VA of ours is marked attached at once, with no
 * finalizer (deleting it needs no detach).
 */
export class TrivialHandler implements Handler {
  constructor(
    private readonly writer: VolumeAttachmentWriter,
    private readonly log: Logger,
  ) {}

  async syncVolumeAttachment(va: VolumeAttachment): Promise<void> {
    if (va.status?.attached) return;
    await this.writer.markAttached(va, {});
    this.log.v(2).info("Marked VolumeAttachment as attached", { va: va.metadata.name });
  }

  /** No finalizer, so a deleted VA owes nothing. */
  noteDeletedVolumeAttachment(_va: VolumeAttachment): boolean {
    return false;
  }

  async syncDeletedVolumeAttachment(_name: string): Promise<string | undefined> {
    return undefined;
  }

  /** No finalizers are ever added, so no PV ever needs one removed. */
  pvNeedsSync(_pv: PersistentVolume): boolean {
    return false;
  }

  async syncPersistentVolume(_pv: PersistentVolume): Promise<void> {}
}
