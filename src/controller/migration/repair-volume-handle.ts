import { TranslationError } from "./errors";
import { inTreePluginForDriver } from "./in-tree-plugins";

/**
 * repairVolumeHandle completes the handle of a migrated volume with what
 * only the node knows, before the reconciler compares it with the handles
 * ListVolumes reports (csi-translation-lib's RepairVolumeHandle). Only GCE
 * PD changes anything: `projects/UNSPECIFIED/...` takes the node ID's
 * project, and its zone or region when the handle has none. Fails for a
 * driver that replaces no in-tree plugin.
 */
export function repairVolumeHandle(driverName: string, volumeHandle: string, nodeId: string): string {
  const plugin = inTreePluginForDriver(driverName);
  if (!plugin) throw new TranslationError(`could not find In-Tree driver name for CSI plugin ${driverName}`);
  return plugin.repairVolumeHandle(volumeHandle, nodeId);
}
