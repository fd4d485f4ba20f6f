import type { PersistentVolume } from "../kube/objects/persistent-volume";
import { migratedToAnnotation } from "./annotations";
import { isMigratable } from "./migration/in-tree-plugins";
import { carriesOurFinalizer } from "./our-finalizer";

/**
 * pvNeedsSync answers, for a PV event and again when its sync runs, whether
 * the PV may need our finalizer removed. Only a PV with our finalizer can,
 * and only when it is being deleted or when CSI migration was rolled back:
 * an in-tree PV whose `pv.kubernetes.io/migrated-to` does not name us, so
 * kube-controller-manager attaches it again and our finalizer must go. Every
 * other PV event is dropped: queuing it would only make a worker find
 * nothing to do.
 *
 * Upstream asks csi-translation-lib whether the PV is migratable at all, not
 * whether it migrates to this driver; the same here.
 */
export function pvNeedsSync(pv: PersistentVolume, driverName: string): boolean {
  if (!carriesOurFinalizer(pv, driverName)) return false;
  if (pv.metadata.deletionTimestamp) return true;
  return isMigratable(pv.spec) && pv.metadata.annotations?.[migratedToAnnotation] !== driverName;
}
