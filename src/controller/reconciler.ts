import type { CsiNode } from "../kube/objects/csi-node";
import type { PersistentVolume } from "../kube/objects/persistent-volume";
import type { VolumeAttachment } from "../kube/objects/volume-attachment";
import type { Store } from "../kube/store";
import type { Logger } from "../log/logger";
import type { WorkQueue } from "../queue/work-queue";
import { realClock, type Clock } from "../util/clock";
import { abortableSleep } from "../util/abortable-sleep";
import { errorMessage } from "../util/error-message";
import { carriesOurFinalizer } from "./our-finalizer";
import type { ForcedSyncs } from "./forced-syncs";
import type { InheritedPublications } from "./inherited-publications";
import { pvNeedsSync } from "./pv-needs-sync";
import { isSettled } from "./settled-volume-attachment";
import { nodeIdsNamedBy, unnamedNodeIds } from "./unnamed-publications";
import { listedVolumeHandle, resolvePublication, type ResolutionStep } from "./publication-resolution";

/** VolumeLister is the one driver call the reconciler needs (CsiClient.forEachPublishedVolume). */
export interface VolumeLister {
  /** forEachPublishedVolume hands every volume the driver lists, with the node IDs it is published to, to `onVolume`, page by page. */
  forEachPublishedVolume(maxEntries: number, timeoutMs: number, onVolume: (volumeId: string, nodeIds: readonly string[]) => void, signal?: AbortSignal): Promise<void>;
}

export interface ReconcilerOptions {
  /** Our driver's name: only VAs whose spec.attacher is this are compared. */
  readonly driverName: string;
  /** The driver's ListVolumes (CsiClient). */
  readonly lister: VolumeLister;
  /** Caches the VAs, their PVs and node IDs are read from; never written. */
  readonly vas: Store<VolumeAttachment>;
  readonly pvs: Store<PersistentVolume>;
  readonly csiNodes: Store<CsiNode>;
  /** Where a mismatch asks the CSI handler for one sync it would otherwise skip. */
  readonly forcedSyncs: ForcedSyncs;
  /**
   * The VA work queue ("csi-attacher-va"): a mismatch is `add`ed, and a VA
   * whose name is queued or held by a worker is left to that worker.
   */
  readonly vaQueue: Pick<WorkQueue<string>, "add" | "queuedOrProcessing">;
  /**
   * Where a PV of ours whose volume the listing shows published on a node
   * that no VA of ours names is marked (with those node IDs), and the PVs
   * this replica inherited are cleared once a listing said where their
   * volumes are: the PV sync, fed by the PV queue ("csi-attacher-pv"),
   * unpublishes and releases them.
   */
  readonly inherited: InheritedPublications;
  readonly pvQueue: Pick<WorkQueue<string>, "add">;
  /** Time between the end of one pass and the start of the next (--reconcile-sync; default 1m). */
  readonly periodMs: number;
  /** ListVolumes page size (--max-entries; 0 = the driver's choice). */
  readonly maxEntries: number;
  /** Bound on each ListVolumes page of a pass (--timeout; default 15s). */
  readonly timeoutMs: number;
  readonly log: Logger;
  /** Time source of the wait between passes; default the real clock. */
  readonly clock?: Clock;
}

/** resolveReconcilerOptions fills the defaults of every optional field. */
function resolveReconcilerOptions(options: ReconcilerOptions): Required<ReconcilerOptions> {
  return { ...options, clock: options.clock ?? realClock };
}

/** Upstream's ReconcileVA log line for each step a VA's volume can fail to resolve at. */
const resolutionFailures: Record<ResolutionStep, string> = {
  "pv-spec": "Failed to get PV Spec",
  "csi-source": "Failed to get CSI Source",
};

/** Target is where a VA's volume should be published. */
interface Target {
  readonly volumeHandle: string;
  readonly nodeId: string;
}

/**
 * Compared is one VA of a pass with where its volume should be published
 * (or how resolving that failed, reported once the listing is in) and
 * whether the listing showed it there. `found` follows the volume's last
 * listing entry, as upstream's map of the listing does.
 */
type Compared = { readonly va: VolumeAttachment } & ({ readonly target: Target; found: boolean } | { readonly target: undefined; readonly report: () => void });

/**
 * Reconciler compares, every `periodMs`, what the VAs of our driver say with
 * what the driver says is published (ListVolumes with published nodes), as
 * upstream's ReconcileVA does. A VA whose `status.attached` disagrees with
 * "its node is among the volume's published nodes", in either direction, is
 * marked for a forced sync and queued: the CSI handler then publishes or
 * unpublishes again although the status says there is nothing to do. Beyond
 * upstream, a volume of a PV that carries our finalizer, listed as published
 * on a node that no VA of ours names (its VA vanished in kube-apiserver's
 * delete race, kubernetes#77988, while no replica watched), is marked for
 * the PV sync to unpublish from that node. Only
 * a settled VA is forced (see isSettled): one whose attach or detach is
 * under way disagrees with the driver for a moment by nature (published,
 * `attached: true` not written yet), and forcing it would publish twice. The
 * reconciler itself never writes to the API and never calls publish or
 * unpublish, so the VA queue stays the only path to both and one VA is
 * never worked on twice at once.
 */
export class Reconciler {
  private readonly options: Required<ReconcilerOptions>;

  constructor(options: ReconcilerOptions) {
    this.options = resolveReconcilerOptions(options);
  }

  /**
   * run reconciles at once, then `periodMs` after each pass ends, until
   * `signal` aborts. The caller must have waited for the stores' first
   * lists: against a half-filled cache a VA would be skipped at best.
   */
  async run(signal: AbortSignal): Promise<void> {
    const { log, periodMs, maxEntries } = this.options;
    log.v(2).info("Starting VolumeAttachment reconciler", { periodMs, maxEntries });
    while (!signal.aborted) {
      await this.reconcile(signal);
      await abortableSleep(periodMs, signal, this.options.clock);
    }
  }

  /**
   * reconcile makes one pass. A failed ListVolumes is logged and the pass
   * ends: the next period tries again, and nothing is forced meanwhile.
   * `signal` cuts a listing short on shutdown, so stopping never waits for
   * --timeout.
   */
  async reconcile(signal?: AbortSignal): Promise<void> {
    const { driverName, lister, maxEntries, timeoutMs, log } = this.options;
    log.v(4).info("Reconciling VolumeAttachments with driver backend state");
    // The VAs are taken before the driver is asked, as upstream does: a VA
    // created during the listing is left for the next pass rather than
    // compared with a listing that may predate its publish. They are
    // resolved now too, so that the listing is read page by page into
    // their `found` marks: a pass then holds one page of the driver's
    // answer and an index of our own VAs, never the driver's whole listing.
    const compared: Compared[] = [];
    const byHandle = new Map<string, Compared & { target: Target }>();
    /** A second VA of one volume (multi-attach) is rare: those few are chained here. */
    const moreByHandle = new Map<string, (Compared & { target: Target })[]>();
    /** Our VAs by the PV they name: the nodes a listed volume of ours may be on. */
    const ourVasByPv = new Map<string, VolumeAttachment[]>();
    for (const va of this.options.vas.list()) {
      if (va.spec.attacher !== driverName) continue;
      const pvName = va.spec.source.persistentVolumeName;
      if (pvName) ourVasByPv.set(pvName, [...(ourVasByPv.get(pvName) ?? []), va]);
      const entry = this.resolve(va);
      compared.push(entry);
      if (entry.target === undefined) continue;
      const handle = entry.target.volumeHandle;
      if (!byHandle.has(handle)) byHandle.set(handle, entry);
      else {
        const more = moreByHandle.get(handle);
        if (more === undefined) moreByHandle.set(handle, [entry]);
        else more.push(entry);
      }
    }
    const mark = (entry: (Compared & { target: Target }) | undefined, nodeIds: readonly string[]) => {
      if (entry !== undefined) entry.found = nodeIds.includes(entry.target.nodeId);
    };
    const ourPvByHandle = this.pvsCarryingOurFinalizer();
    /** PV name -> node IDs its volume is listed on that no VA of ours names. */
    const orphans = new Map<string, string[]>();
    const noteOrphans = (volumeId: string, nodeIds: readonly string[]) => {
      const pvName = ourPvByHandle.get(volumeId);
      if (pvName === undefined || nodeIds.length === 0) return;
      const unnamed = unnamedNodeIds(nodeIds, nodeIdsNamedBy(ourVasByPv.get(pvName) ?? [], this.options.csiNodes, driverName));
      if (unnamed.length > 0) orphans.set(pvName, unnamed);
    };
    try {
      await lister.forEachPublishedVolume(
        maxEntries,
        timeoutMs,
        (volumeId, nodeIds) => {
          mark(byHandle.get(volumeId), nodeIds);
          for (const entry of moreByHandle.get(volumeId) ?? []) mark(entry, nodeIds);
          noteOrphans(volumeId, nodeIds);
        },
        signal,
      );
    } catch (e: unknown) {
      // A listing cut short by shutdown is no failure worth reporting.
      if (signal?.aborted) return;
      // Upstream's two wrappings (lister, then ReconcileVA), for operators' searches.
      log.error("Failed to reconcile VolumeAttachment", { err: `failed to ListVolumes: failed to list volumes: ${errorMessage(e)}` });
      return;
    }
    this.releaseUnnamed(orphans);
    // Deleted VAs and VAs with errors are compared too (upstream skips
    // neither): a VA being deleted that is still published is exactly what
    // a forced detach is for.
    for (const entry of compared) {
      if (entry.target === undefined) {
        entry.report();
        continue;
      }
      const { va, target, found } = entry;
      const attached = va.status?.attached ?? false;
      if (found === attached) continue;
      if (!this.settled(va)) {
        log.v(4).info("VolumeAttachment is in flight; leaving it to its worker", { VolumeAttachment: va.metadata.name, attachedStatus: attached, found });
        continue;
      }
      log.error("VolumeAttachment attached status and actual state do not match. Adding back to VolumeAttachment queue for forced reprocessing", {
        VolumeAttachment: va.metadata.name,
        volumeHandle: target.volumeHandle,
        attachedStatus: attached,
        found,
      });
      // Mark before adding: a worker may take the name as soon as it is queued.
      this.options.forcedSyncs.mark(va.metadata.name);
      this.options.vaQueue.add(va.metadata.name);
    }
  }

  /**
   * releaseUnnamed hands the PV sync what a complete listing showed: the
   * PVs with volumes published where no VA of ours names them (marked, the
   * sync checks again before it unpublishes), and every PV this replica
   * inherited, whose volume is now known to be published only where the
   * listing said (no longer inherited; queued if it waits for that to lose
   * our finalizer).
   */
  private releaseUnnamed(orphans: ReadonlyMap<string, readonly string[]>): void {
    const { inherited, pvQueue, pvs, driverName, log } = this.options;
    for (const [pvName, nodeIds] of orphans) {
      log.warn("Volume is published on nodes that no VolumeAttachment of ours names; unpublishing it there", { pv: pvName, nodeIds: nodeIds.join(",") });
      inherited.markOrphans(pvName, nodeIds);
      pvQueue.add(pvName);
    }
    for (const pvName of inherited.inheritedNames()) {
      inherited.checked(pvName);
      const pv = pvs.get(pvName);
      if (pv !== undefined && pvNeedsSync(pv, driverName) && !orphans.has(pvName)) pvQueue.add(pvName);
    }
  }

  /**
   * pvsCarryingOurFinalizer maps the volume handle of every PV of our driver
   * that carries our finalizer (a VA of ours named it once) to its name: the
   * only volumes whose publishes without a VA may be released. An in-tree
   * PV migrated to us is left out: its listed handle depends on the node
   * (see listedVolumeHandle), which a publish without a VA does not tell.
   */
  private pvsCarryingOurFinalizer(): Map<string, string> {
    const { pvs, driverName } = this.options;
    const byHandle = new Map<string, string>();
    for (const pv of pvs.list()) {
      const csi = pv.spec.csi;
      if (csi?.driver === driverName && carriesOurFinalizer(pv, driverName)) byHandle.set(csi.volumeHandle, pv.metadata.name);
    }
    return byHandle;
  }

  /**
   * settled asks isSettled about `va` as the pass compared it, now that the
   * listing is in: the queue, the cache and our writes are read at this
   * moment, after the await, since a worker may have taken the VA meanwhile.
   */
  private settled(va: VolumeAttachment): boolean {
    const name = va.metadata.name;
    return isSettled({
      queuedOrProcessing: this.options.vaQueue.queuedOrProcessing(name),
      comparedVersion: va.metadata.resourceVersion,
      cachedVersion: this.options.vas.get(name)?.metadata.resourceVersion,
      unobservedWriteVersion: this.options.vas.unobservedOwnWrite(name),
    });
  }

  /**
   * resolve finds where a VA's volume should be published, as upstream's
   * ReconcileVA does: the PV's spec (an in-tree PV translated to CSI) or the
   * inline spec gives the handle; a migrated volume's handle is then
   * repaired with the node ID (GCE PD fills in its project and zone), so it
   * reads as the driver lists it. A VA that cannot be resolved is skipped,
   * with upstream's words kept in `report` for once the listing is in (a
   * failed listing reports nothing else, as upstream): its own sync
   * reports the problem on the VA.
   */
  private resolve(va: VolumeAttachment): Compared {
    const { driverName, csiNodes, pvs, log } = this.options;
    const vaLog = () => log.with({ VolumeAttachment: va.metadata.name });
    const failed = (report: () => void): Compared => ({ va, target: undefined, report });
    // The annotation fallback, as for detach: a VA whose node is gone may still be published.
    const { nodeId: node, volume: resolution } = resolvePublication(va, { pvs, csiNodes, driverName }, { remembered: true });
    if (!node.ok) {
      const { error } = node;
      return failed(() => vaLog().error("Failed to find node ID err", { err: error }));
    }
    const nodeId = node.id;
    if (!resolution.ok) {
      const { step, error } = resolution;
      return failed(() => vaLog().error(resolutionFailures[step], { err: error }));
    }
    const { csi } = resolution.volume;
    try {
      return { va, target: { volumeHandle: listedVolumeHandle(resolution.volume, nodeId), nodeId }, found: false };
    } catch (e: unknown) {
      // As upstream, an inline spec of a driver that replaces no in-tree plugin ends here.
      return failed(() => vaLog().error("Failed to repair volume handle for driver", { err: e, volumeHandle: csi.volumeHandle, sourceDriver: csi.driver }));
    }
  }
}
