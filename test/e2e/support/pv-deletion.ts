import type { AdminClient } from "../../cluster/admin-client";
import { paths } from "./objects";

/** The finalizer kube-controller-manager's pv-protection controller keeps on a PV while a pod uses it. */
export const pvProtection = "kubernetes.io/pv-protection";

/**
 * deletePvAsReclaimWould deletes a PV the way its reclaim does once no pod
 * uses it: pv-protection goes first (guarded by the resourceVersion read,
 * so no other finalizer is clobbered), then the DELETE; our finalizer, if
 * any, still holds the PV until the attacher lets it go.
 */
export async function deletePvAsReclaimWould(admin: AdminClient, name: string): Promise<void> {
  const pv = await admin.get(paths.persistentVolume(name));
  const finalizers = (pv.metadata?.finalizers ?? []).filter((finalizer) => finalizer !== pvProtection);
  await admin.patch(paths.persistentVolume(name), [
    { op: "test", path: "/metadata/resourceVersion", value: pv.metadata?.resourceVersion },
    { op: "replace", path: "/metadata/finalizers", value: finalizers },
  ], "json");
  await admin.delete(paths.persistentVolume(name));
}
