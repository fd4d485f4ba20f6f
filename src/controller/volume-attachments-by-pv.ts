import type { VolumeAttachment } from "../kube/objects/volume-attachment";
import type { Store } from "../kube/store";

/**
 * VolumeAttachmentsByPv indexes the cached VAs by the PV they name in
 * `spec.source.persistentVolumeName`, whatever their attacher (upstream keeps
 * a PV's finalizer while any VA names it). It answers "is any VA still using
 * this PV" without a scan of every VA for every PV sync, which at tens of
 * thousands of volumes would make PV deletion quadratic.
 *
 * Invariant: `pvOfVa` and `vasOfPv` are inverse maps over exactly the VAs in
 * the store that name a PV; the store's events keep them so (an update first
 * forgets the VA, then indexes its new version, so a changed source moves).
 * A PV named by one VA (nearly every PV: only multi-attach volumes have more)
 * maps to that VA's name itself; a Set is made only for a second user, and
 * goes back to a plain name when one is left. A Set costs ~200 heap bytes,
 * more than the rest of the index entry.
 */
export class VolumeAttachmentsByPv {
  private readonly pvOfVa = new Map<string, string>();
  private readonly vasOfPv = new Map<string, string | Set<string>>();

  constructor(vas: Store<VolumeAttachment>) {
    for (const va of vas.list()) this.index(va);
    vas.addHandlers({
      onAdd: (va) => this.index(va),
      onUpdate: (_old, va) => this.index(va),
      onDelete: (va) => this.forget(va.metadata.name),
    });
  }

  /** vasUsing lists the names of the VAs that name `pvName`, in no particular order. */
  vasUsing(pvName: string): string[] {
    const users = this.vasOfPv.get(pvName);
    if (users === undefined) return [];
    return typeof users === "string" ? [users] : [...users];
  }

  private index(va: VolumeAttachment): void {
    const name = va.metadata.name;
    const pvName = va.spec.source.persistentVolumeName;
    // Most updates are status changes: the VA still names the same PV.
    if (pvName && this.pvOfVa.get(name) === pvName) return;
    this.forget(name);
    if (!pvName) return;
    this.pvOfVa.set(name, pvName);
    const users = this.vasOfPv.get(pvName);
    if (users === undefined) this.vasOfPv.set(pvName, name);
    else if (typeof users === "string") this.vasOfPv.set(pvName, new Set([users, name]));
    else users.add(name);
  }

  private forget(vaName: string): void {
    const pvName = this.pvOfVa.get(vaName);
    if (pvName === undefined) return;
    this.pvOfVa.delete(vaName);
    const users = this.vasOfPv.get(pvName);
    if (typeof users === "string") {
      this.vasOfPv.delete(pvName);
      return;
    }
    if (users === undefined) return;
    users.delete(vaName);
    if (users.size > 1) return;
    const last = users.values().next();
    if (last.done) this.vasOfPv.delete(pvName);
    else this.vasOfPv.set(pvName, last.value);
  }
}
