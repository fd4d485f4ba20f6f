import type { CsiClient, PublishRequest, UnpublishRequest } from "../csi/csi-client";
import type { AttacherApi } from "./attacher-api";
import type { EventRecorder } from "../kube/event-recorder";
import type { CsiNode } from "../kube/objects/csi-node";
import { objectReference } from "../kube/objects/event";
import type { CsiPersistentVolumeSource, PersistentVolume } from "../kube/objects/persistent-volume";
import type { VolumeAttachment } from "../kube/objects/volume-attachment";
import type { Store } from "../kube/store";
import type { Logger } from "../log/logger";
import { errorMessage } from "../util/error-message";
import { finalizerName } from "./driver-names";
import type { ForcedSyncs } from "./forced-syncs";
import type { Handler } from "./handler";
import type { InheritedPublications } from "./inherited-publications";
import { carriesOurFinalizer } from "./our-finalizer";
import type { PersistentVolumeFinalizerWriter } from "./pv-finalizer-writer";
import { pvNeedsSync } from "./pv-needs-sync";
import type { VanishedVolumeAttachments } from "./vanished-volume-attachments";
import type { VolumeAttachmentWriter } from "./va-writer";
import { nodeIdsNamedBy, pvReleaseStep, registeredNodeIds, unnamedNodeIds } from "./unnamed-publications";
import { volumeCapabilityOf } from "./volume-capability";
import { VolumeAttachmentsByPv } from "./volume-attachments-by-pv";
import { VolumeLocks } from "./volume-locks";
import { resolvePersistentVolume, resolvePublication, type NodeIdResolution, type PublicationLookups, type ResolvedVolume, type VolumeResolution } from "./volume-resolution";

/** The Secret read of the handler; AttacherApi in production, a recording fake in unit tests. */
export type CsiHandlerApi = Pick<AttacherApi, "secretData">;

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
  readonly api: CsiHandlerApi;
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
   * PVs whose publishes this replica did not see end (filled by `start`),
   * and the node IDs the reconciler found their volumes published on with no
   * VA of ours there: unpublished here before our PV finalizer goes.
   */
  readonly inherited: InheritedPublications;
  /**
   * The driver lists where volumes are published (LIST_VOLUMES and
   * LIST_VOLUMES_PUBLISHED_NODES: the reconciler runs and says where an
   * inherited PV's volume is); without it an inherited PV's volume is
   * unpublished from every node our driver registered.
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
 * ControllerPublishVolume/ControllerUnpublishVolume, releases the volumes of
 * VAs that vanished still carrying our finalizer, and owns the PV rule:
 * when our PV finalizer may go. It writes
 * nothing itself: VA writes go through the VolumeAttachmentWriter, PV writes
 * through the PersistentVolumeFinalizerWriter.
 */
export class CsiHandler implements Handler {
  private readonly writer: VolumeAttachmentWriter;
  private readonly vasByPv: VolumeAttachmentsByPv;
  private readonly vanished: VanishedVolumeAttachments;
  private readonly lookups: PublicationLookups;
  private readonly inherited: InheritedPublications;
  /** A publish and the recovery of the same volume never interleave (see VolumeLocks). */
  private readonly volumeLocks = new VolumeLocks();

  constructor(private readonly options: CsiHandlerOptions) {
    this.writer = options.writer;
    this.inherited = options.inherited;
    this.lookups = { pvs: options.pvs, csiNodes: options.csiNodes, driverName: options.driverName };
    this.vasByPv = new VolumeAttachmentsByPv(options.vas);
    this.vanished = options.vanished;
  }

  /**
   * start records the PVs that carry our finalizer now, as the caches hold
   * their first lists: a VA of ours may have named one of them and vanished
   * while no replica watched, so their publishes are checked before our
   * finalizer leaves them.
   */
  start(): void {
    this.inherited.inherit(this.options.pvs.list(), this.options.driverName);
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
    return this.releaseVanished(name);
  }

  /** syncCached attaches or detaches a VA the cache has, first releasing a vanished VA of the same name it does not take over. */
  private async syncCached(va: VolumeAttachment): Promise<void> {
    const { name } = va.metadata;
    const log = this.options.log.with({ va: name });
    // Taken first on every sync, as upstream consumes it: a forced sync is
    // one sync, whatever that sync then decides.
    const forced = this.options.forcedSyncs.take(name);
    // As upstream's syncVA: a VA not being deleted is attached, one being deleted detached.
    const attaching = !va.metadata.deletionTimestamp;
    // A VA of the same name vanished with our finalizer on. This one takes
    // its publish over when it stands for the same volume on the same node
    // (the A/D controller names VAs after exactly that) and its own sync
    // will publish it again (attach) or release it (detach with our
    // finalizer on). Otherwise the vanished publish is released first.
    const vanished = this.vanished.get(name);
    const takesOver = vanished !== undefined && samePublication(vanished, va) && (attaching || carriesOurFinalizer(va, this.options.driverName));
    if (vanished && !takesOver) await this.releaseVanished(name);
    // Nothing to do for an attached VA, or for a deleted one without our
    // finalizer (detached), unless the reconciler forced this sync.
    if (!forced && (attaching ? va.status?.attached : !carriesOurFinalizer(va, this.options.driverName))) {
      log.v(4).info(attaching ? "VolumeAttachment is already attached" : "VolumeAttachment is already detached");
    } else if (attaching) {
      await this.attach(va, { forced, log });
    } else {
      await this.detach(va, { forced, log });
    }
    if (takesOver) this.vanished.forget(name);
  }

  /**
   * releaseVanished unpublishes the volume of a VA the API no longer has,
   * if it vanished still carrying our finalizer (there is no VA left to
   * write an error to), and resolves with its PV, whose finalizer may now go.
   */
  private async releaseVanished(name: string): Promise<string | undefined> {
    const vanished = this.vanished.get(name);
    if (!vanished) {
      this.options.log.v(3).info("VolumeAttachment was deleted, ignoring", { va: name });
      return undefined;
    }
    const log = this.options.log.with({ va: name });
    log.v(2).info("Detaching vanished VolumeAttachment");
    const { nodeId } = resolvePublication(vanished, this.lookups, { remembered: true });
    if (!nodeId.ok) this.reportUnknownNode(vanished.spec.source.persistentVolumeName ?? undefined, `VolumeAttachment ${name} vanished and its node ID cannot be told: ${errorMessage(nodeId.error)}`);
    await this.unpublish(vanished);
    this.vanished.forget(name);
    log.v(2).info("Detached");
    return vanished.spec.source.persistentVolumeName ?? undefined;
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
      publishContext = await this.volumeLocks.withLock(source.csi.volumeHandle, () => this.options.csi.controllerPublish(request, this.options.timeoutMs, { migrated: source.migrated }));
    } catch (e: unknown) {
      await this.saveError(() => this.writer.saveAttachError(current, e), log);
      throw e;
    }
    log.v(2).info("Attached");
    await this.writer.markAttached(current, publishContext);
  }

  private async detach(va: VolumeAttachment, { forced, log }: SyncContext): Promise<void> {
    log.v(2).info("Detaching", forced ? { forced } : {});
    try {
      await this.unpublish(va);
      log.v(2).info("Detached");
      await this.writer.markDetached(va);
    } catch (e: unknown) {
      await this.saveError(() => this.writer.saveDetachError(va, e), log);
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
   * syncPersistentVolume first unpublishes the volume from the node IDs the
   * reconciler found it published on with no VA of ours there, then removes
   * our finalizer from a PV that no longer needs it (see pvNeedsSync) and
   * that no VA names, unless a publish of it may be left that this replica
   * did not see end (see InheritedPublications and pvReleaseStep).
   */
  async syncPersistentVolume(pv: PersistentVolume): Promise<void> {
    const name = pv.metadata.name;
    const log = this.options.log.with({ pv: name });
    const orphans = this.inherited.orphansOf(name);
    if (orphans !== undefined) {
      await this.unpublishUnnamed(pv, orphans, log);
      this.inherited.orphansReleased(name);
    }
    if (!pvNeedsSync(pv, this.options.driverName)) return;
    // A vanished VA still owes its unpublish, which needs this PV.
    const [user] = [...this.vasByPv.vasUsing(name), ...this.vanished.namingPv(name)];
    if (user !== undefined) {
      log.v(4).info("PersistentVolume still used by a VolumeAttachment", { va: user });
      return;
    }
    // Only a PV being deleted: a live one that lost us to a rolled-back CSI
    // migration is attached by the in-tree plugin now, with no VA, and
    // unpublishing it here would detach the very disk it uses.
    const step = pvReleaseStep(pv.metadata.deletionTimestamp ? this.inherited.isInherited(name) : false, this.options.listsPublishedNodes);
    if (step === "wait") {
      log.v(4).info("PersistentVolume carried our finalizer before this replica led; keeping it until ListVolumes shows where its volume is published");
      return;
    }
    if (step === "unpublish-registered") {
      const registered = registeredNodeIds(this.options.csiNodes.list(), this.options.driverName);
      if (registered.length === 0) {
        const why = `PersistentVolume ${name} carried our finalizer before this replica led, the driver cannot list where its volume is published, and no CSINode registers the driver`;
        this.reportUnknownNode(name, why);
        throw new Error(why);
      }
      await this.unpublishUnnamed(pv, registered, log);
      this.inherited.checked(name);
    }
    if (await this.options.pvWriter.removeFinalizer(pv)) log.v(2).info("Removed finalizer from PersistentVolume");
  }

  /**
   * unpublishUnnamed unpublishes the PV's volume from each of `candidates`
   * that no VA of ours names, under the volume's lock and with the VAs read
   * again once it is held: a VA that appeared meanwhile keeps its node, and
   * its publish waits for this recovery to finish, so the volume ends
   * published under it. Upstream's rule holds: only a volume a PV of ours
   * names is ever unpublished without a VA.
   */
  private async unpublishUnnamed(pv: PersistentVolume, candidates: readonly string[], log: Logger): Promise<void> {
    const { csi, migrated } = resolvedOrThrow(resolvePersistentVolume(pv));
    const volumeId = csi.volumeHandle;
    await this.volumeLocks.withLock(volumeId, async () => {
      const ours = this.vasByPv.vasUsing(pv.metadata.name).flatMap((vaName) => {
        const va = this.options.vas.get(vaName);
        return va?.spec.attacher === this.options.driverName ? [va] : [];
      });
      const targets = unnamedNodeIds(candidates, nodeIdsNamedBy(ours, this.options.csiNodes, this.options.driverName));
      if (targets.length === 0) return;
      const secrets = await this.publishSecrets(csi);
      for (const nodeId of targets) {
        log.v(2).info("Unpublishing a volume that no VolumeAttachment names on this node", { volume: volumeId, nodeId });
        await this.options.csi.controllerUnpublish({ volumeId, nodeId, secrets }, this.options.timeoutMs, { migrated });
      }
    });
  }

  /**
   * reportUnknownNode says, as an error line and a Warning event on the PV,
   * that a volume may still be published to a node the attacher cannot
   * name, so our finalizer stays on its PV until an operator checks.
   */
  private reportUnknownNode(pvName: string | undefined, why: string): void {
    const pv = pvName === undefined ? undefined : this.options.pvs.get(pvName);
    const resolved = pv === undefined ? undefined : resolvePersistentVolume(pv);
    const volume = resolved?.ok ? resolved.volume.csi.volumeHandle : "(unknown)";
    const finalizer = finalizerName(this.options.driverName);
    const check = `check on the storage backend that volume ${volume} is published to no node that no VolumeAttachment names, then remove finalizer ${finalizer} from PersistentVolume ${pvName ?? "(none)"}`;
    this.options.log.error("Volume may still be published to a node that cannot be known; keeping our finalizer on its PersistentVolume", { pv: pvName, volume, reason: why, check });
    if (pv) this.options.events?.warning(objectReference("PersistentVolume", "v1", pv.metadata), "UnpublishNodeUnknown", `${why}; ${check}`);
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

/** samePublication: both VAs stand for the same volume on the same node. */
function samePublication(a: VolumeAttachment, b: VolumeAttachment): boolean {
  return a.spec.nodeName === b.spec.nodeName && JSON.stringify(a.spec.source) === JSON.stringify(b.spec.source);
}
