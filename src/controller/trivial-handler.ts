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

  /** Nothing is ever published, so nothing is inherited. */
  start(): void {}

  /** A VA the cache no longer has owes nothing: it never had a finalizer of ours. */
  async syncVolumeAttachment(name: string, va: VolumeAttachment | undefined): Promise<undefined> {
    if (!va || va.status?.attached) return undefined;
    await this.writer.markAttached(va, {});
    this.log.v(2).info("Marked VolumeAttachment as attached", { va: name });
    return undefined;
  }

  /** No finalizers are ever added, so no PV ever needs one removed (pvNeedsSync never queues one). */
  async syncPersistentVolume(_pv: PersistentVolume): Promise<void> {}
}
