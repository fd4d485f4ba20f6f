import type { PersistentVolumeSpec } from "../../kube/objects/persistent-volume";
import { awsEbsPlugin } from "./aws-ebs";
import { azureDiskPlugin } from "./azure-disk";
import { gcePdPlugin } from "./gce-pd";
import type { InTreePlugin } from "./in-tree-plugin";
import { cinderPlugin } from "./openstack-cinder";
import { portworxPlugin } from "./portworx-volume";
import { vspherePlugin } from "./vsphere-volume";

/**
 * The attachable in-tree plugins whose PVs the attacher translates, as in
 * csi-translation-lib. Azure File (not attachable) and RBD (its in-tree
 * plugin is gone) are left out: an attacher never sees them.
 */
export const inTreePlugins: readonly InTreePlugin[] = [
  awsEbsPlugin,
  gcePdPlugin,
  azureDiskPlugin,
  cinderPlugin,
  vspherePlugin,
  portworxPlugin,
];

/**
 * inTreePluginOf returns the plugin whose source the spec carries, or
 * undefined for a CSI (or unknown) volume. The API server allows one source
 * per PV, so the first match is the only one.
 */
export function inTreePluginOf(spec: PersistentVolumeSpec): InTreePlugin | undefined {
  return inTreePlugins.find((plugin) => spec[plugin.sourceField] !== undefined && spec[plugin.sourceField] !== null);
}

/** inTreePluginForDriver returns the plugin a CSI driver replaces, if any. */
export function inTreePluginForDriver(driverName: string): InTreePlugin | undefined {
  return inTreePlugins.find((plugin) => plugin.driverName === driverName);
}

/**
 * isMigratable tells whether the spec holds an in-tree source that CSI
 * migration translates (csi-translation-lib's IsPVMigratable): such a PV is
 * attached through its CSI driver, counted with `migrated="true"`, and its
 * finalizer handed back when its `pv.kubernetes.io/migrated-to` annotation
 * names another driver.
 */
export function isMigratable(spec: PersistentVolumeSpec): boolean {
  return inTreePluginOf(spec) !== undefined;
}
