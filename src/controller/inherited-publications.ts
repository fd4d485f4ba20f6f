import type { PersistentVolume } from "../kube/objects/persistent-volume";
import { carriesOurFinalizer } from "./our-finalizer";

/**
 * InheritedPublications is what a leader knows it must still check about
 * publishes whose end it did not see: a VA of ours that kube-apiserver
 * deleted while it still carried our finalizer (kubernetes#77988) while no
 * replica was watching leaves its volume published with no VA to say so.
 *
 * - `inherited`: with a driver that lists where volumes are published, the
 *   PVs that carried our finalizer when this replica's caches first synced
 *   as leader. A VA that named one of them may have vanished before this
 *   replica watched; for any other PV this replica saw every VA of ours
 *   that named it come and go (a vanish it saw is
 *   VanishedVolumeAttachments' work). A PV leaves the set once a complete
 *   ListVolumes showed where its volume is published (the reconciler).
 *   With a driver that cannot list, nothing is inherited: nothing could
 *   tell such a PV from any detached one (see PublicationRecovery).
 * - `orphans`: node IDs the reconciler's ListVolumes showed a PV's volume
 *   published on while no VA of ours named that volume there; the PV sync
 *   unpublishes them (after checking again) and clears them.
 *
 * Invariant: only the leader fills either: `inherit` runs once, when the
 * caches hold their first lists; a standby keeps nothing here. The set
 * holds names the PV store already holds, so it costs a reference per PV.
 */
export class InheritedPublications {
  private readonly inherited = new Set<string>();
  private readonly orphans = new Map<string, readonly string[]>();

  /** inherit records every PV in `pvs` that carries the finalizer of `driverName`'s attacher: the caches' first lists. */
  inherit(pvs: Iterable<PersistentVolume>, driverName: string): void {
    for (const pv of pvs) if (carriesOurFinalizer(pv, driverName)) this.inherited.add(pv.metadata.name);
  }

  /** isInherited: the PV carried our finalizer when this replica started leading, and nothing has shown since that no publish of it is left. */
  isInherited(pvName: string): boolean {
    return this.inherited.has(pvName);
  }

  /** inheritedNames lists the PVs still inherited, for a reconciler pass to cover. */
  inheritedNames(): string[] {
    return [...this.inherited];
  }

  /** checked says that no publish of the PV's volume is left unknown: it is no longer inherited. */
  checked(pvName: string): void {
    this.inherited.delete(pvName);
  }

  /** markOrphans records, for the PV sync, the node IDs its volume was listed on with no VA of ours there (replacing older marks). */
  markOrphans(pvName: string, nodeIds: readonly string[]): void {
    this.orphans.set(pvName, nodeIds);
  }

  orphansOf(pvName: string): readonly string[] | undefined {
    return this.orphans.get(pvName);
  }

  /** orphansReleased clears the PV's marks once its sync has unpublished them. */
  orphansReleased(pvName: string): void {
    this.orphans.delete(pvName);
  }
}
