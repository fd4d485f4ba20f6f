import type { EventRecorder } from "../kube/event-recorder";
import type { CsiNode } from "../kube/objects/csi-node";
import { objectReference } from "../kube/objects/event";
import type { PersistentVolume } from "../kube/objects/persistent-volume";
import type { VolumeAttachment } from "../kube/objects/volume-attachment";
import type { Store } from "../kube/store";
import type { Logger } from "../log/logger";
import { errorMessage } from "../util/error-message";
import { finalizerName } from "./driver-names";
import type { InheritedPublications } from "./inherited-publications";
import { carriesOurFinalizer } from "./our-finalizer";
import { resolvedOrThrow, type PublicationCalls } from "./publication-calls";
import { nodeIdsNamedBy, unnamedNodeIds } from "./unnamed-publications";
import type { VanishedVolumeAttachments } from "./vanished-volume-attachments";
import type { VolumeAttachmentsByPv } from "./volume-attachments-by-pv";
import type { VolumeLocks } from "./volume-locks";
import { resolvePersistentVolume, resolvePublication, type PublicationLookups } from "./volume-resolution";

export interface PublicationRecoveryOptions {
  /** Our driver's name: whose VAs, finalizers and CSINode entries count. */
  readonly driverName: string;
  /** The driver calls, shared with attach and detach. */
  readonly calls: PublicationCalls;
  /** The caches the handler reads; never written here. */
  readonly lookups: PublicationLookups;
  readonly vas: Store<VolumeAttachment>;
  readonly pvs: Store<PersistentVolume>;
  readonly csiNodes: Store<CsiNode>;
  readonly vasByPv: VolumeAttachmentsByPv;
  /** VAs that vanished still carrying our finalizer, as the attach controller noted them. */
  readonly vanished: VanishedVolumeAttachments;
  /** PVs this leader inherited, and the node IDs the reconciler listed their volumes on with no VA of ours there. */
  readonly inherited: InheritedPublications;
  /** The driver lists where volumes are published (LIST_VOLUMES and LIST_VOLUMES_PUBLISHED_NODES). */
  readonly listsPublishedNodes: boolean;
  /** Shared with attach: a publish and an unpublish of the same volume never interleave. */
  readonly volumeLocks: VolumeLocks;
  /** Where the Warning event goes when the node a volume may still be published to cannot be known. Default: no events. */
  readonly events?: Pick<EventRecorder, "warning">;
  readonly log: Logger;
}

/**
 * PublicationRecovery releases publishes that no VA of ours names any more,
 * and only where there is evidence of one, so that no call reaches the
 * driver that a lost publish does not justify:
 *
 * - a VA this replica saw vanish still carrying our finalizer (kube-apiserver's
 *   delete race, kubernetes#77988, or a relist that found it gone): its
 *   volume is unpublished once from its last known node;
 * - with a driver that lists where volumes are published: the pairs of a
 *   volume of one of our PVs and a node that a complete ListVolumes showed
 *   and no VA of ours names (the reconciler marks them). A PV that carried
 *   our finalizer when this replica started leading keeps it until such a
 *   listing came in, since a VA that named it may have vanished unseen.
 *
 * A driver that cannot list gets no recovery across a restart, as upstream:
 * a PV carrying our finalizer with no VA is what every detached volume looks
 * like until its PV is deleted, and unpublishing each from every node would
 * cost every deletion one call per node.
 */
export class PublicationRecovery {
  constructor(private readonly options: PublicationRecoveryOptions) {}

  /**
   * start records, for a driver that lists, the PVs that carry our finalizer
   * now, as the caches hold their first lists: a VA of ours may have named
   * one of them and vanished while no replica watched, and the first
   * complete listing will say.
   */
  start(): void {
    if (this.options.listsPublishedNodes) this.options.inherited.inherit(this.options.pvs.list(), this.options.driverName);
  }

  /**
   * releaseVanishedBefore settles a vanished VA of the same name before `va`
   * is synced, and answers whether `va` takes its publish over: it does when
   * it stands for the same volume on the same node (the A/D controller names
   * VAs after exactly that) and its own sync will publish it again (attach)
   * or release it (detach with our finalizer on). Otherwise the vanished
   * publish is released now. The caller calls `tookOver` after the sync.
   */
  async releaseVanishedBefore(va: VolumeAttachment): Promise<boolean> {
    const vanished = this.options.vanished.get(va.metadata.name);
    if (vanished === undefined) return false;
    const attaching = !va.metadata.deletionTimestamp;
    if (samePublication(vanished, va) && (attaching || carriesOurFinalizer(va, this.options.driverName))) return true;
    await this.releaseVanished(va.metadata.name);
    return false;
  }

  /** tookOver: a VA of the same name has synced the vanished one's publish, so nothing is left to release. */
  tookOver(name: string): void {
    this.options.vanished.forget(name);
  }

  /**
   * releaseVanished unpublishes the volume of a VA the API no longer has,
   * if it vanished still carrying our finalizer (there is no VA left to
   * write an error to), and resolves with its PV, whose finalizer may now go.
   */
  async releaseVanished(name: string): Promise<string | undefined> {
    const vanished = this.options.vanished.get(name);
    if (!vanished) {
      this.options.log.v(3).info("VolumeAttachment was deleted, ignoring", { va: name });
      return undefined;
    }
    const log = this.options.log.with({ va: name });
    log.v(2).info("Detaching vanished VolumeAttachment");
    const { nodeId } = resolvePublication(vanished, this.options.lookups, { remembered: true });
    if (!nodeId.ok) this.reportUnknownNode(vanished.spec.source.persistentVolumeName ?? undefined, `VolumeAttachment ${name} vanished and its node ID cannot be told: ${errorMessage(nodeId.error)}`);
    await this.options.calls.unpublishVa(vanished);
    this.options.vanished.forget(name);
    log.v(2).info("Detached");
    return vanished.spec.source.persistentVolumeName ?? undefined;
  }

  /**
   * releaseListedOrphans unpublishes the PV's volume from the node IDs the
   * reconciler listed it on with no VA of ours there, and clears the marks.
   */
  async releaseListedOrphans(pv: PersistentVolume, log: Logger): Promise<void> {
    const name = pv.metadata.name;
    const orphans = this.options.inherited.orphansOf(name);
    if (orphans === undefined) return;
    await this.unpublishUnnamed(pv, orphans, log);
    this.options.inherited.orphansReleased(name);
  }

  /**
   * keepsFinalizer answers whether our finalizer must stay on a PV no VA
   * names: a PV being deleted that this leader inherited from a driver that
   * lists waits for the first complete listing. A live PV never waits: one
   * that lost us to a rolled-back CSI migration is attached by the in-tree
   * plugin now, with no VA, and nothing of it may be unpublished.
   */
  keepsFinalizer(pv: PersistentVolume): boolean {
    return Boolean(pv.metadata.deletionTimestamp) && this.options.inherited.isInherited(pv.metadata.name);
  }

  /** vanishedNaming lists the vanished VAs that still owe an unpublish of the PV `pvName`'s volume. */
  vanishedNaming(pvName: string): string[] {
    return this.options.vanished.namingPv(pvName);
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
    const { driverName, vas, csiNodes, calls } = this.options;
    const volume = resolvedOrThrow(resolvePersistentVolume(pv));
    const volumeId = volume.csi.volumeHandle;
    await this.options.volumeLocks.withLock(volumeId, async () => {
      const ours = this.options.vasByPv.vasUsing(pv.metadata.name).flatMap((vaName) => {
        const va = vas.get(vaName);
        return va?.spec.attacher === driverName ? [va] : [];
      });
      const targets = unnamedNodeIds(candidates, nodeIdsNamedBy(ours, csiNodes, driverName));
      if (targets.length === 0) return;
      const secrets = await calls.secretsOf(volume.csi);
      for (const nodeId of targets) {
        log.v(2).info("Unpublishing a volume that no VolumeAttachment names on this node", { volume: volumeId, nodeId });
        await calls.unpublish(volume, nodeId, secrets);
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
}

/** samePublication: both VAs stand for the same volume on the same node. */
function samePublication(a: VolumeAttachment, b: VolumeAttachment): boolean {
  return a.spec.nodeName === b.spec.nodeName && JSON.stringify(a.spec.source) === JSON.stringify(b.spec.source);
}
