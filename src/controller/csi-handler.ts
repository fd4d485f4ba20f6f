import type { CsiClient, PublishRequest } from "../csi/csi-client";
import type { EventRecorder } from "../kube/event-recorder";
import type { CsiNode } from "../kube/objects/csi-node";
import type { PersistentVolume } from "../kube/objects/persistent-volume";
import type { VolumeAttachment } from "../kube/objects/volume-attachment";
import type { Store } from "../kube/store";
import type { Logger } from "../log/logger";
import type { ForcedSyncs } from "./forced-syncs";
import type { Handler } from "./handler";
import type { InheritedPublications } from "./inherited-publications";
import { carriesOurFinalizer } from "./our-finalizer";
import { PublicationCalls, resolvedOrThrow, type SecretReader } from "./publication-calls";
import { PublicationRecovery } from "./publication-recovery";
import type { PersistentVolumeFinalizerWriter } from "./pv-finalizer-writer";
import { pvNeedsSync } from "./pv-needs-sync";
import type { VanishedVolumeAttachments } from "./vanished-volume-attachments";
import type { VolumeAttachmentWriter } from "./va-writer";
import { volumeCapabilityOf } from "./volume-capability";
import { VolumeAttachmentsByPv } from "./volume-attachments-by-pv";
import { VolumeLocks } from "./volume-locks";
import { resolvePublication, type NodeIdResolution, type PublicationLookups, type ResolvedVolume, type VolumeResolution } from "./volume-resolution";

/** What an attach or a detach is told about its sync besides the VA: whether it was forced, and the VA's logger. */
interface SyncContext {
  readonly forced: boolean;
  readonly log: Logger;
}

export interface CsiHandlerOptions {
  /** The driver's name (GetPluginInfo): CSINode entries and the migration rollback are matched on it. */
  readonly driverName: string;
  /** ControllerPublishVolume / ControllerUnpublishVolume. */
  readonly csi: CsiClient;
  /** Secrets (never cached). */
  readonly api: SecretReader;
  /** Every VA write. */
  readonly writer: VolumeAttachmentWriter;
  /** Every PV write: our finalizer on and off. */
  readonly pvWriter: PersistentVolumeFinalizerWriter;
  /** PV cache: sources are read from it, never from the API. */
  readonly pvs: Store<PersistentVolume>;
  /** VA cache: the handler indexes it by PV name for the PV rules. */
  readonly vas: Store<VolumeAttachment>;
  /** CSINode cache (our driver's entry only): node IDs. */
  readonly csiNodes: Store<CsiNode>;
  /** VA names the reconciler wants synced even though their status says there is nothing to do. */
  readonly forcedSyncs: ForcedSyncs;
  /** VAs that vanished still carrying our finalizer (the attach controller notes them): their volumes are unpublished here. */
  readonly vanished: VanishedVolumeAttachments;
  /**
   * PVs whose publishes this replica did not see end (filled by `start`
   * for a driver that lists), and the node IDs the reconciler found their
   * volumes published on with no VA of ours there: unpublished here before
   * our PV finalizer goes.
   */
  readonly inherited: InheritedPublications;
  /**
   * The driver lists where volumes are published (LIST_VOLUMES and
   * LIST_VOLUMES_PUBLISHED_NODES: the reconciler runs and says where an
   * inherited PV's volume is); without it nothing is inherited, as upstream
   * keeps nothing across a restart (see PublicationRecovery).
   */
  readonly listsPublishedNodes: boolean;
  /** Where the Warning event goes when the node a volume may still be published to cannot be known. Default: no events. */
  readonly events?: Pick<EventRecorder, "warning">;
  readonly log: Logger;
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
 * when our PV finalizer may go. Publishes that no VA names any more are the
 * PublicationRecovery's, which it asks at the two points a sync meets them.
 * It writes nothing itself: VA writes go through the
 * VolumeAttachmentWriter, PV writes through the
 * PersistentVolumeFinalizerWriter.
 */
export class CsiHandler implements Handler {
  private readonly writer: VolumeAttachmentWriter;
  private readonly vasByPv: VolumeAttachmentsByPv;
  private readonly lookups: PublicationLookups;
  private readonly calls: PublicationCalls;
  private readonly recovery: PublicationRecovery;
  /** A publish and the recovery of the same volume never interleave (see VolumeLocks). */
  private readonly volumeLocks = new VolumeLocks();

  constructor(private readonly options: CsiHandlerOptions) {
    this.writer = options.writer;
    this.lookups = { pvs: options.pvs, csiNodes: options.csiNodes, driverName: options.driverName };
    this.vasByPv = new VolumeAttachmentsByPv(options.vas);
    this.calls = new PublicationCalls({ csi: options.csi, api: options.api, lookups: this.lookups, timeoutMs: options.timeoutMs });
    this.recovery = new PublicationRecovery({
      driverName: options.driverName,
      calls: this.calls,
      lookups: this.lookups,
      vas: options.vas,
      pvs: options.pvs,
      csiNodes: options.csiNodes,
      vasByPv: this.vasByPv,
      vanished: options.vanished,
      inherited: options.inherited,
      listsPublishedNodes: options.listsPublishedNodes,
      volumeLocks: this.volumeLocks,
      ...(options.events ? { events: options.events } : {}),
      log: options.log,
    });
  }

  start(): void {
    this.recovery.start();
  }

  async syncVolumeAttachment(name: string, va: VolumeAttachment | undefined): Promise<string | undefined> {
    if (va) {
      await this.syncCached(va);
      return undefined;
    }
    // A VA deleted between the reconciler's mark and its sync: the mark
    // must go with it, or the set keeps the name forever and a later VA of
    // the same name gets a forced sync it was never owed.
    this.options.forcedSyncs.take(name);
    return this.recovery.releaseVanished(name);
  }

  /** syncCached attaches or detaches a VA the cache has, after the recovery settled a vanished VA of the same name. */
  private async syncCached(va: VolumeAttachment): Promise<void> {
    const { name } = va.metadata;
    const log = this.options.log.with({ va: name });
    // Taken first on every sync, as upstream consumes it: a forced sync is
    // one sync, whatever that sync then decides.
    const forced = this.options.forcedSyncs.take(name);
    // As upstream's syncVA: a VA not being deleted is attached, one being deleted detached.
    const attaching = !va.metadata.deletionTimestamp;
    const takesOver = await this.recovery.releaseVanishedBefore(va);
    // Nothing to do for an attached VA, or for a deleted one without our
    // finalizer (detached), unless the reconciler forced this sync.
    if (!forced && (attaching ? va.status?.attached : !carriesOurFinalizer(va, this.options.driverName))) {
      log.v(4).info(attaching ? "VolumeAttachment is already attached" : "VolumeAttachment is already detached");
    } else if (attaching) {
      await this.attach(va, { forced, log });
    } else {
      await this.detach(va, { forced, log });
    }
    if (takesOver) this.recovery.tookOver(name);
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
      // The VA is in the cache, so a recovery that takes the lock after this
      // publish sees it; one that holds the lock now finishes its unpublish first.
      publishContext = await this.volumeLocks.withLock(source.csi.volumeHandle, () => {
        this.refuseIfGone(current);
        return this.calls.publish(request, source);
      });
    } catch (e: unknown) {
      await this.saveError(() => this.writer.saveAttachError(current, e), log);
      throw e;
    }
    log.v(2).info("Attached");
    await this.writer.markAttached(current, publishContext);
  }

  /**
   * refuseIfGone stops a publish of a VA that the cache no longer has (or
   * has as another object of the same name): kube-apiserver's DELETE can
   * remove a VA just after our finalizer went on (kubernetes#77988), and a
   * publish sent then would name a VA that no longer exists. The vanished
   * VA's sync unpublishes whatever an earlier attempt may have published.
   */
  private refuseIfGone(va: VolumeAttachment): void {
    const cached = this.options.vas.get(va.metadata.name);
    if (cached === undefined || cached.metadata.uid !== va.metadata.uid) throw new Error(`VolumeAttachment ${JSON.stringify(va.metadata.name)} was deleted before it was published`);
  }

  private async detach(va: VolumeAttachment, { forced, log }: SyncContext): Promise<void> {
    log.v(2).info("Detaching", forced ? { forced } : {});
    try {
      await this.calls.unpublishVa(va);
      log.v(2).info("Detached");
      await this.writer.markDetached(va);
    } catch (e: unknown) {
      await this.saveError(() => this.writer.saveDetachError(va, e), log);
      throw e;
    }
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
    const secrets = await this.calls.secretsOf(csi);
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
   * syncPersistentVolume first has the recovery unpublish the volume from
   * the node IDs the reconciler listed it on with no VA of ours there, then
   * removes our finalizer from a PV that no longer needs it (see
   * pvNeedsSync) and that no VA names, unless the recovery keeps it.
   */
  async syncPersistentVolume(pv: PersistentVolume): Promise<void> {
    const name = pv.metadata.name;
    const log = this.options.log.with({ pv: name });
    await this.recovery.releaseListedOrphans(pv, log);
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

  private async saveError(save: () => Promise<unknown>, log: Logger): Promise<void> {
    try {
      await save();
    } catch (e: unknown) {
      // The original error is what gets retried; a failed save is only logged.
      log.v(2).info("Failed to save error to VolumeAttachment", { err: e });
    }
  }
}
