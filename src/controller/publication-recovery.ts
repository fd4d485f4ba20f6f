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
import { nodeIdsNamedBy, unnamedNodeIds } from "./unnamed-publications";
import type { VanishedVolumeAttachments } from "./vanished-volume-attachments";
import type { VolumeAttachmentsByPv } from "./volume-attachments-by-pv";
import { resolvePersistentVolume, resolvePublication, type PublicationLookups } from "./publication-resolution";

export interface PublicationRecoveryOptions {
  /** The driver's name (GetPluginInfo): whose VAs, finalizers and CSINode entries count, and what the migration rollback is matched on. */
  readonly driverName: string;
  /** Where a VA's volume and node ID are resolved from the caches below. */
  readonly lookups: PublicationLookups;
  /** VA cache: indexed by PV name for the PV rules. */
  readonly vas: Store<VolumeAttachment>;
  /** PV cache: sources are read from it, never from the API. */
  readonly pvs: Store<PersistentVolume>;
  /** CSINode cache (our driver's entry only): node IDs. */
  readonly csiNodes: Store<CsiNode>;
  /** The VA cache indexed by the PV each VA names. */
  readonly vasByPv: VolumeAttachmentsByPv;
  /** VAs that vanished still carrying our finalizer, as the attach controller noted them. */
  readonly vanished: VanishedVolumeAttachments;
  /** PVs this leader inherited (a driver that lists only), and the node IDs the reconciler listed their volumes on with no VA of ours there. */
  readonly inherited: InheritedPublications;
  /**
   * The driver lists where volumes are published (LIST_VOLUMES and
   * LIST_VOLUMES_PUBLISHED_NODES: the reconciler runs); without it nothing
   * is inherited, as upstream keeps nothing across a restart.
   */
  readonly listsPublishedNodes: boolean;
  /** Where the Warning event goes when the node a volume may still be published to cannot be known. Default: no events. */
  readonly events?: Pick<EventRecorder, "warning">;
  readonly log: Logger;
}

/**
 * RecoveryPlan is what the PV sync unpublishes of one PV's volume now, and
 * what that settles once every unpublish succeeded.
 */
export interface RecoveryPlan {
  readonly pvName: string;
  /** Node IDs to unpublish the volume from, each once, sorted. */
  readonly nodeIds: readonly string[];
  /** Vanished VAs the plan settles: released by it, or taken over by a VA of ours on the same node. */
  readonly vanished: readonly string[];
  /** Whether the reconciler's marks of the PV are settled too. */
  readonly orphans: boolean;
}

/**
 * PublicationRecovery decides which publishes that no VA of ours names any
 * more are released, and keeps the books on them; the CSI handler makes the
 * calls. It recovers only where there is evidence of a publish, so that no
 * call reaches the driver that a lost publish does not justify:
 *
 * - a VA this replica saw vanish still carrying our finalizer
 *   (kube-apiserver's delete race, kubernetes#77988, or a relist that found
 *   it gone): its volume is unpublished once from its last known node,
 *   unless a VA of ours on that node took the publish over;
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

  /** owesOn: something of the PV's volume may have to be unpublished (a vanished VA names it, or the reconciler marked it). */
  owesOn(pvName: string): boolean {
    return this.options.inherited.orphansOf(pvName) !== undefined || this.options.vanished.namingPv(pvName).length > 0;
  }

  /**
   * planFor reads, at the moment the caller holds the volume's lock, which
   * nodes the PV's volume must be unpublished from: each vanished VA's node
   * that no VA of ours took over (one attaching, or carrying our finalizer,
   * on the same node ID), and each node the reconciler listed that no VA of
   * ours names. A vanished VA whose node ID cannot be told is reported and
   * fails the plan, so the PV keeps our finalizer and its sync is retried.
   */
  planFor(pv: PersistentVolume): RecoveryPlan {
    const { driverName, csiNodes } = this.options;
    const pvName = pv.metadata.name;
    const ours = this.ourVasNaming(pvName);
    // The node IDs of our VAs that publish (attaching) or release (holding
    // our finalizer) this volume themselves; undefined when one of their
    // nodes cannot be told, which could be any node.
    const takenOver = nodeIdsNamedBy(ours.filter((va) => !va.metadata.deletionTimestamp || carriesOurFinalizer(va, driverName)), csiNodes, driverName);
    const candidates: string[] = [];
    const settles: string[] = [];
    // While a VA whose node cannot be told may have taken a vanished
    // publish over, those stay owed: its deletion queues this PV again.
    for (const name of takenOver === undefined ? [] : this.options.vanished.namingPv(pvName)) {
      const last = this.options.vanished.get(name);
      if (last === undefined) continue;
      const { nodeId } = resolvePublication(last, this.options.lookups, { remembered: true });
      if (!nodeId.ok) {
        // A plain error, not the CSINode's NotFound: the PV sync must be
        // retried until the node is known, not taken for a PV that is gone.
        const why = `VolumeAttachment ${name} vanished and its node ID cannot be told: ${errorMessage(nodeId.error)}`;
        this.reportUnknownNode(pv, why);
        throw new Error(why, { cause: nodeId.error });
      }
      if (!takenOver?.has(nodeId.id)) candidates.push(nodeId.id);
      settles.push(name);
    }
    const orphans = this.options.inherited.orphansOf(pvName);
    const listed = orphans === undefined ? [] : unnamedNodeIds(orphans, nodeIdsNamedBy(ours, csiNodes, driverName));
    return { pvName, nodeIds: [...new Set([...candidates, ...listed])].sort(), vanished: settles, orphans: orphans !== undefined };
  }


  /** settled: every unpublish of `plan` succeeded, so what it covered is owed no more. */
  settled(plan: RecoveryPlan): void {
    for (const name of plan.vanished) this.options.vanished.forget(name);
    if (plan.orphans) this.options.inherited.orphansReleased(plan.pvName);
  }

  /** vanishedNaming lists the vanished VAs that still owe an unpublish of the PV `pvName`'s volume. */
  vanishedNaming(pvName: string): string[] {
    return this.options.vanished.namingPv(pvName);
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

  /** ourVasNaming lists the cached VAs of our driver that name the PV `pvName`. */
  private ourVasNaming(pvName: string): VolumeAttachment[] {
    return this.options.vasByPv.vasUsing(pvName).flatMap((name) => {
      const va = this.options.vas.get(name);
      return va?.spec.attacher === this.options.driverName ? [va] : [];
    });
  }

  /**
   * reportUnknownNode says, as an error line and a Warning event on the PV,
   * that a volume may still be published to a node the attacher cannot
   * name, so our finalizer stays on its PV until an operator checks.
   */
  private reportUnknownNode(pv: PersistentVolume, why: string): void {
    const pvName = pv.metadata.name;
    const resolved = resolvePersistentVolume(pv);
    const volume = resolved.ok ? resolved.volume.csi.volumeHandle : "(unknown)";
    const finalizer = finalizerName(this.options.driverName);
    const check = `check on the storage backend that volume ${volume} is published to no node that no VolumeAttachment names, then remove finalizer ${finalizer} from PersistentVolume ${pvName}`;
    this.options.log.error("Volume may still be published to a node that cannot be known; keeping our finalizer on its PersistentVolume", { pv: pvName, volume, reason: why, check });
    this.options.events?.warning(objectReference("PersistentVolume", "v1", pv.metadata), "UnpublishNodeUnknown", `${why}; ${check}`);
  }
}
