import type { CsiClient, PublishRequest, UnpublishRequest } from "../csi/csi-client";
import type { CsiPersistentVolumeSource, PersistentVolume } from "../kube/objects/persistent-volume";
import type { VolumeAttachment } from "../kube/objects/volume-attachment";
import type { Logger } from "../log/logger";
import { errorMessage } from "../util/error-message";
import type { ForcedSyncs } from "./forced-syncs";
import type { Handler } from "./handler";
import { carriesOurFinalizer } from "./our-finalizer";
import type { AttacherApi } from "./attacher-api";
import { PublicationRecovery, type PublicationRecoveryOptions } from "./publication-recovery";
import type { PersistentVolumeFinalizerWriter } from "./pv-finalizer-writer";
import { pvNeedsSync } from "./pv-needs-sync";
import type { VolumeAttachmentWriter } from "./va-writer";
import { volumeCapabilityOf } from "./volume-capability";
import { VolumeAttachmentsByPv } from "./volume-attachments-by-pv";
import { VolumeLocks } from "./volume-locks";
import { resolvePersistentVolume, resolvePublication, type NodeIdResolution, type PublicationLookups, type ResolvedVolume, type VolumeResolution } from "./publication-resolution";

/** What an attach or a detach is told about its sync besides the VA: whether it was forced, and the VA's logger. */
interface SyncContext {
  readonly forced: boolean;
  readonly log: Logger;
}

/**
 * CsiHandlerOptions: what the handler shares with its PublicationRecovery
 * (the driver name, the caches, the books on vanished and inherited
 * publishes, whether the driver lists, events, the logger), and what only
 * the handler needs to call the driver and write.
 */
export interface CsiHandlerOptions extends Omit<PublicationRecoveryOptions, "lookups" | "vasByPv"> {
  /** ControllerPublishVolume / ControllerUnpublishVolume. */
  readonly csi: CsiClient;
  /** Secrets (never cached). */
  readonly api: Pick<AttacherApi, "secretData">;
  /** Every VA write. */
  readonly writer: VolumeAttachmentWriter;
  /** Every PV write: our finalizer on and off. */
  readonly pvWriter: PersistentVolumeFinalizerWriter;
  /** VA names the reconciler wants synced even though their status says there is nothing to do. */
  readonly forcedSyncs: ForcedSyncs;
  /** --timeout: deadline of each ControllerPublish/Unpublish, in ms. */
  readonly timeoutMs: number;
  /** The driver reports PUBLISH_READONLY; without it readonly is always false (CSI spec). */
  readonly supportsPublishReadonly: boolean;
  readonly supportsSingleNodeMultiWriter: boolean;
  /** --default-fstype. */
  readonly defaultFsType: string;
}

/**
 * CsiHandler attaches and detaches VAs through the driver's
 * ControllerPublishVolume/ControllerUnpublishVolume and owns the PV rule:
 * when our PV finalizer may go. It makes every driver call about a volume
 * on a node; which publishes that no VA names are released is the
 * PublicationRecovery's decision, asked for in the PV sync. It writes
 * nothing itself: VA writes go through the VolumeAttachmentWriter, PV
 * writes through the PersistentVolumeFinalizerWriter.
 */
export class CsiHandler implements Handler {
  private readonly writer: VolumeAttachmentWriter;
  private readonly vasByPv: VolumeAttachmentsByPv;
  private readonly lookups: PublicationLookups;
  private readonly recovery: PublicationRecovery;
  /** A publish and a recovery's unpublish of the same volume never interleave (see VolumeLocks). */
  private readonly volumeLocks = new VolumeLocks();

  constructor(private readonly options: CsiHandlerOptions) {
    this.writer = options.writer;
    this.lookups = { pvs: options.pvs, csiNodes: options.csiNodes, driverName: options.driverName };
    this.vasByPv = new VolumeAttachmentsByPv(options.vas);
    const { driverName, vas, pvs, csiNodes, vanished, inherited, listsPublishedNodes, events, log } = options;
    this.recovery = new PublicationRecovery({ driverName, lookups: this.lookups, vas, pvs, csiNodes, vasByPv: this.vasByPv, vanished, inherited, listsPublishedNodes, log, ...(events ? { events } : {}) });
  }

  start(): void {
    this.recovery.start();
  }

  /**
   * syncVolumeAttachment attaches or detaches a VA the cache has. For a name
   * the cache no longer has, it settles a VA that vanished still carrying
   * our finalizer: one that named a PV is released by that PV's sync, under
   * the volume's lock, so the PV is handed on for the PV queue; an inline
   * one has no PV, so it is detached here from its last state, with nothing
   * written (there is no VA left to write to).
   */
  async syncVolumeAttachment(name: string, va: VolumeAttachment | undefined): Promise<string | undefined> {
    const last = va === undefined ? this.vanishedUnder(name) : undefined;
    const pvName = last?.spec.source.persistentVolumeName;
    if (pvName) return pvName;
    const subject = va ?? last;
    if (subject === undefined) return undefined;
    await this.syncCached(subject, { vanished: va === undefined });
    if (va === undefined) this.options.vanished.forget(name);
    return undefined;
  }

  /** vanishedUnder answers the last state of a VA of ours that vanished under `name` still carrying our finalizer, if any. */
  private vanishedUnder(name: string): VolumeAttachment | undefined {
    // A VA deleted between the reconciler's mark and its sync: the mark
    // must go with it, or the set keeps the name forever and a later VA of
    // the same name gets a forced sync it was never owed.
    this.options.forcedSyncs.take(name);
    const last = this.options.vanished.get(name);
    if (!last) this.options.log.v(3).info("VolumeAttachment was deleted, ignoring", { va: name });
    return last;
  }

  /** syncCached attaches or detaches `va`: a cached VA, or the last state of a vanished one, which is only ever detached. */
  private async syncCached(va: VolumeAttachment, { vanished }: { readonly vanished: boolean }): Promise<void> {
    const log = this.options.log.with({ va: va.metadata.name });
    // Taken first on every sync, as upstream consumes it: a forced sync is
    // one sync, whatever that sync then decides.
    const forced = this.options.forcedSyncs.take(va.metadata.name);
    // As upstream's syncVA: a VA not being deleted is attached, one being deleted detached.
    const attaching = !vanished && !va.metadata.deletionTimestamp;
    // Nothing to do for an attached VA, or for a deleted one without our
    // finalizer (detached), unless the reconciler forced this sync.
    if (!forced && (attaching ? va.status?.attached : !carriesOurFinalizer(va, this.options.driverName))) {
      log.v(4).info(attaching ? "VolumeAttachment is already attached" : "VolumeAttachment is already detached");
      return;
    }
    if (attaching) await this.attach(va, { forced, log });
    else await this.detach(va, { forced, log, vanished });
  }

  private async attach(va: VolumeAttachment, { forced, log }: SyncContext): Promise<void> {
    log.v(2).info("Attaching", forced ? { forced } : {});
    // An attach never falls back to the node ID remembered on the VA:
    // publishing to a node the driver did not register is wrong.
    const publication = resolvePublication(va, this.lookups, { remembered: false });
    // The newest VA the server returned: every write is computed against it.
    let current = va;
    let publishContext: Record<string, string>;
    try {
      // Everything that can fail without side effects on the VA is checked
      // before its finalizer goes on: a finalizer on a VA that can never
      // attach would only block its deletion.
      const source = await this.attachSourceOf(publication.volume);
      const request = await this.publishRequestFor(source, publication.nodeId);
      current = await this.writer.ensureFinalizerAndNodeId(current, request.nodeId);
      const written = current;
      // The VA is in the cache, so a recovery that takes the lock after this
      // publish sees it; one that holds the lock now finishes its unpublish first.
      publishContext = await this.volumeLocks.withLock(source.csi.volumeHandle, () => {
        // kube-apiserver's DELETE can remove a VA just after our finalizer
        // went on (kubernetes#77988): a publish for a VA the cache no longer
        // has would be one nobody asked for. Its vanished sync unpublishes
        // whatever an earlier attempt may have published.
        const cached = this.options.vas.get(written.metadata.name);
        if (cached === undefined || cached.metadata.uid !== written.metadata.uid) throw new Error(`VolumeAttachment ${JSON.stringify(written.metadata.name)} was deleted before it was published`);
        return this.options.csi.controllerPublish(request, this.options.timeoutMs, { migrated: source.migrated });
      });
    } catch (e: unknown) {
      await this.saveError(() => this.writer.saveAttachError(current, e), log);
      throw e;
    }
    log.v(2).info("Attached");
    await this.writer.markAttached(current, publishContext);
  }

  /** detach unpublishes the VA's volume and marks it detached; a vanished VA's is only unpublished, as nothing is left to mark. */
  private async detach(va: VolumeAttachment, { forced, log, vanished }: SyncContext & { readonly vanished: boolean }): Promise<void> {
    log.v(2).info(vanished ? "Detaching vanished VolumeAttachment" : "Detaching", forced ? { forced } : {});
    try {
      await this.unpublish(va);
      log.v(2).info("Detached");
      if (!vanished) await this.writer.markDetached(va);
    } catch (e: unknown) {
      if (!vanished) await this.saveError(() => this.writer.saveDetachError(va, e), log);
      throw e;
    }
  }

  /**
   * unpublish releases a VA's volume from its node: a deleted VA's, or a
   * vanished one's. It falls back to the node ID remembered on the VA, so a
   * node that is gone stays detachable. The PV is only read, never written.
   */
  private async unpublish(va: VolumeAttachment): Promise<void> {
    const { volume, nodeId: node } = resolvePublication(va, this.lookups, { remembered: true });
    const source = resolvedOrThrow(volume);
    const secrets = await this.publishSecrets(source.csi);
    if (!node.ok) throw node.error;
    const request: UnpublishRequest = { volumeId: source.csi.volumeHandle, nodeId: node.id, secrets };
    await this.options.csi.controllerUnpublish(request, this.options.timeoutMs, { migrated: source.migrated });
  }

  /**
   * attachSourceOf resolves the VA's volume for an attach. A PV being deleted
   * is refused; otherwise the PV gets our finalizer before anything is
   * published, so it cannot go while attached, and it gets it even when the
   * translation of an in-tree PV then fails, as upstream's does. (The spec
   * is translated from the cached PV, which differs from the one the
   * finalizer patch answered with only by that finalizer.) An inline spec
   * must be CSI already: the A/D controller translates inline in-tree
   * volumes before creating the VA.
   */
  private async attachSourceOf(resolution: VolumeResolution): Promise<ResolvedVolume> {
    const { pv } = resolution;
    if (pv) {
      if (pv.metadata.deletionTimestamp) throw new Error(`PersistentVolume ${JSON.stringify(pv.metadata.name)} is marked for deletion`);
      await this.options.pvWriter.ensureFinalizer(pv);
    }
    return resolvedOrThrow(resolution);
  }

  private async publishRequestFor({ spec, csi }: ResolvedVolume, node: NodeIdResolution): Promise<PublishRequest & { nodeId: string }> {
    const { options } = this;
    const volumeCapability = volumeCapabilityOf(spec, csi, {
      singleNodeMultiWriter: options.supportsSingleNodeMultiWriter,
      defaultFsType: options.defaultFsType,
    });
    const secrets = await this.publishSecrets(csi);
    if (!node.ok) throw node.error;
    const nodeId = node.id;
    return {
      volumeId: csi.volumeHandle,
      nodeId,
      volumeCapability,
      // "CO MUST set this field to false if SP does not have the PUBLISH_READONLY controller capability."
      readonly: options.supportsPublishReadonly ? csi.readOnly : false,
      secrets,
      volumeContext: csi.volumeAttributes ?? {},
    };
  }

  /**
   * syncPersistentVolume first releases what the recovery says is owed of
   * the PV's volume (a vanished VA's publish, the reconciler's marks), then
   * removes our finalizer from a PV that no longer needs it (see
   * pvNeedsSync) and that no VA names, unless the recovery keeps it.
   */
  async syncPersistentVolume(pv: PersistentVolume): Promise<void> {
    const name = pv.metadata.name;
    const log = this.options.log.with({ pv: name });
    if (this.recovery.owesOn(name)) await this.releaseUnnamed(pv, log);
    if (!pvNeedsSync(pv, this.options.driverName)) return;
    // A vanished VA still owes its unpublish, which needs this PV.
    const [user] = [...this.vasByPv.vasUsing(name), ...this.recovery.vanishedNaming(name)];
    if (user !== undefined) {
      log.v(4).info("PersistentVolume still used by a VolumeAttachment", { va: user });
      return;
    }
    if (this.recovery.keepsFinalizer(pv)) {
      log.v(4).info("PersistentVolume carried our finalizer before this replica led; keeping it until ListVolumes shows where its volume is published");
      return;
    }
    if (await this.options.pvWriter.removeFinalizer(pv)) log.v(2).info("Removed finalizer from PersistentVolume");
  }

  /**
   * releaseUnnamed unpublishes the PV's volume from the nodes the recovery
   * plans, holding the volume's lock from the plan to the last call: the
   * plan reads the VAs once the lock is held, so a VA that appeared
   * meanwhile keeps its node, and its publish waits for this to finish, so
   * the volume ends published under it. Upstream's rule holds: only a
   * volume a PV of ours names is ever unpublished without a VA.
   */
  private async releaseUnnamed(pv: PersistentVolume, log: Logger): Promise<void> {
    const { csi, migrated } = resolvedOrThrow(resolvePersistentVolume(pv));
    const volumeId = csi.volumeHandle;
    await this.volumeLocks.withLock(volumeId, async () => {
      const plan = this.recovery.planFor(pv);
      const secrets = plan.nodeIds.length === 0 ? {} : await this.publishSecrets(csi);
      for (const nodeId of plan.nodeIds) {
        log.v(2).info("Unpublishing a volume that no VolumeAttachment names on this node", { volume: volumeId, nodeId });
        await this.options.csi.controllerUnpublish({ volumeId, nodeId, secrets }, this.options.timeoutMs, { migrated });
      }
      this.recovery.settled(plan);
    });
  }

  private async publishSecrets(csi: CsiPersistentVolumeSource): Promise<Record<string, string>> {
    const ref = csi.controllerPublishSecretRef;
    if (!ref) return {};
    try {
      return await this.options.api.secretData(ref.namespace, ref.name);
    } catch (e: unknown) {
      // Names the Secret, never its content.
      throw new Error(`failed to load secret "${ref.namespace}/${ref.name}": ${errorMessage(e)}`, { cause: e });
    }
  }

  private async saveError(save: () => Promise<unknown>, log: Logger): Promise<void> {
    try {
      await save();
    } catch (e: unknown) {
      // The original error is what gets retried; a failed save is only logged.
      log.v(2).info("Failed to save error to VolumeAttachment", { err: e });
    }
  }
}

/**
 * resolvedOrThrow rethrows what a failed resolution step threw, as it was: it
 * becomes the VA's attachError or detachError. An inline spec counts as not
 * migrated here (the migrated label of the publish and unpublish metrics),
 * as upstream's csiAttach and csiDetach count it.
 */
function resolvedOrThrow(resolution: VolumeResolution): ResolvedVolume {
  if (!resolution.ok) throw resolution.error;
  return resolution.volume;
}
