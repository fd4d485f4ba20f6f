import { isNotFound } from "../kube/errors";
import type { PersistentVolume } from "../kube/objects/persistent-volume";
import type { VolumeAttachment } from "../kube/objects/volume-attachment";
import type { Store } from "../kube/store";
import type { Logger } from "../log/logger";
import type { AttachOrDetach } from "../queue/attach-detach-lanes";
import type { WorkQueue } from "../queue/work-queue";
import { runWorkerPool } from "../queue/worker-pool";
import type { Handler } from "./handler";
import { pvNeedsSync } from "./pv-needs-sync";
import type { VanishedVolumeAttachments } from "./vanished-volume-attachments";

export interface AttachControllerOptions {
  readonly driverName: string;
  readonly handler: Handler;
  readonly vas: Store<VolumeAttachment>;
  readonly pvs: Store<PersistentVolume>;
  /** Queue of VA names ("csi-attacher-va" in metrics). */
  readonly vaQueue: WorkQueue<string>;
  /** Queue of PV names ("csi-attacher-pv" in metrics). */
  readonly pvQueue: WorkQueue<string>;
  /**
   * Where a deleted VA that still carried our finalizer is noted, so its
   * volume is released (by its PV's sync, or its own name's when inline).
   * Only with the CSI handler: the trivial handler puts no finalizer on
   * anything.
   */
  readonly vanished?: VanishedVolumeAttachments;
  readonly log: Logger;
}

/**
 * AttachController turns store events into queued names and runs the
 * workers that hand each name to the handler, as upstream's
 * CSIAttachController: success forgets the name's failures, an error re-adds
 * it with back-off, and a name is never processed by two workers at once.
 * It only routes, as sample-controller's enqueueFoo does; the filters that
 * drop events say why (shouldEnqueueVaChange, pvNeedsSync).
 */
export class AttachController {
  constructor(private readonly options: AttachControllerOptions) {
    const { driverName, vas, pvs, vaQueue, pvQueue, vanished, log } = options;
    vas.addHandlers({
      onAdd: (va) => vaQueue.add(va.metadata.name),
      onUpdate: (oldVa, newVa) => {
        if (shouldEnqueueVaChange(oldVa, newVa)) vaQueue.add(newVa.metadata.name);
        else log.v(3).info("Ignoring VolumeAttachment change", { va: newVa.metadata.name });
      },
      onDelete: (va) => {
        // A deleted VA may have been the last user of its PV, and the PV's
        // sync releases the volume of one that vanished still carrying our
        // finalizer. An inline VA has no PV: its own name's sync does.
        const owed = vanished?.note(va) ?? false;
        const pvName = va.spec.source.persistentVolumeName;
        if (pvName) pvQueue.add(pvName);
        else if (owed) vaQueue.add(va.metadata.name);
      },
    });
    const onPv = (pv: PersistentVolume) => {
      if (pvNeedsSync(pv, driverName)) pvQueue.add(pv.metadata.name);
    };
    pvs.addHandlers({ onAdd: onPv, onUpdate: (_old, pv) => onPv(pv) });
  }

  /**
   * run processes each queue with up to `workers` items at once and
   * resolves when `signal` aborts and every item in flight is done. The caller must
   * have waited for the stores' first lists: a worker acting on a half-filled
   * cache would see PVs and CSINodes as missing.
   */
  async run(workers: number, signal: AbortSignal): Promise<void> {
    const { vaQueue, pvQueue, log } = this.options;
    log.info("Starting CSI attacher", { workers });
    this.options.handler.start();
    const stop = () => {
      vaQueue.shutDown();
      pvQueue.shutDown();
    };
    if (signal.aborted) stop();
    else signal.addEventListener("abort", stop, { once: true });
    const syncVa = (name: string) => this.syncVa(name);
    const syncPv = (name: string) => this.syncPv(name);
    // Workers cost nothing until there is work: each pool keeps one get pending.
    await Promise.all([
      runWorkerPool(vaQueue, workers, (name) => this.process(vaQueue, name, syncVa)),
      runWorkerPool(pvQueue, workers, (name) => this.process(pvQueue, name, syncPv)),
    ]);
    log.info("Shutting CSI attacher");
  }

  /** process syncs one name: success forgets its failures, an error re-adds it with back-off. Never rejects. */
  private async process(queue: WorkQueue<string>, name: string, sync: (name: string) => Promise<void>): Promise<void> {
    try {
      await sync(name);
      queue.forget(name);
    } catch (e: unknown) {
      this.options.log.v(2).info("Error processing", { queue: queue.name, name, err: e });
      queue.addRateLimited(name);
    }
  }

  private async syncVa(name: string): Promise<void> {
    const va = this.options.vas.get(name);
    if (va && va.spec.attacher !== this.options.driverName) {
      this.options.log.v(4).info("Skipping VolumeAttachment for attacher", { va: name, attacher: va.spec.attacher });
      return;
    }
    const releasedPv = await this.options.handler.syncVolumeAttachment(name, va);
    if (releasedPv !== undefined) this.options.pvQueue.add(releasedPv);
  }

  private async syncPv(name: string): Promise<void> {
    const pv = this.options.pvs.get(name);
    if (!pv) {
      this.options.log.v(3).info("PersistentVolume was deleted, ignoring", { pv: name });
      return;
    }
    try {
      await this.options.handler.syncPersistentVolume(pv);
    } catch (e: unknown) {
      // Gone between the cache read and the patch: nothing left to release.
      if (!isNotFound(e)) throw e;
    }
  }
}

/**
 * vaWorkKind tells, for the VA queue's lanes (attachDetachLanes), what a
 * queued VA name stands for: a detach when the cached VA is being deleted,
 * or when the cache no longer has it (its sync finds it gone, or unpublishes
 * a VA that vanished still carrying our finalizer); an attach otherwise.
 */
export function vaWorkKind(vas: Store<VolumeAttachment>): (name: string) => AttachOrDetach {
  return (name) => {
    const va = vas.get(name);
    return va === undefined || va.metadata.deletionTimestamp ? "detach" : "attach";
  };
}

/**
 * shouldEnqueueVaChange skips updates that only change attachError or
 * detachError: those are our own writes, and reacting to them would retry
 * at once and defeat the back-off. A resync (same resourceVersion) always
 * counts.
 */
export function shouldEnqueueVaChange(oldVa: VolumeAttachment, newVa: VolumeAttachment): boolean {
  if (oldVa.metadata.resourceVersion === newVa.metadata.resourceVersion) return true;
  const errorsOf = (va: VolumeAttachment) => va.status?.attachError ?? va.status?.detachError;
  if (!errorsOf(oldVa) && !errorsOf(newVa)) return true;
  const withoutErrors = (va: VolumeAttachment) =>
    JSON.stringify({
      ...va,
      metadata: { ...va.metadata, resourceVersion: "" },
      status: va.status ? { ...va.status, attachError: undefined, detachError: undefined } : undefined,
    });
  return withoutErrors(oldVa) !== withoutErrors(newVa);
}
