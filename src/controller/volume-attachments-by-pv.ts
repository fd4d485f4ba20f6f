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
 */
export class VolumeAttachmentsByPv {
  private readonly pvOfVa = new Map<string, string>();
  private readonly vasOfPv = new Map<string, Set<string>>();

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
    return [...(this.vasOfPv.get(pvName) ?? [])];
  }

  private index(va: VolumeAttachment): void {
    const name = va.metadata.name;
    this.forget(name);
    const pvName = va.spec.source.persistentVolumeName;
    if (!pvName) return;
    this.pvOfVa.set(name, pvName);
    const users = this.vasOfPv.get(pvName);
    if (users) users.add(name);
    else this.vasOfPv.set(pvName, new Set([name]));
  }

  private forget(vaName: string): void {
    const pvName = this.pvOfVa.get(vaName);
    if (pvName === undefined) return;
    this.pvOfVa.delete(vaName);
    const users = this.vasOfPv.get(pvName);
    users?.delete(vaName);
    if (users?.size === 0) this.vasOfPv.delete(pvName);
  }
}
