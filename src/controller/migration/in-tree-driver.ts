import type { PersistentVolumeSpec } from "../../kube/objects/persistent-volume";

// The attachable in-tree plugins CSI migration covers, and the CSI driver
// each one migrates to (csi-translation-lib's plugin names). Order is the
// order the spec fields are checked in; a spec carries at most one source.
const inTreeDrivers = [
  ["awsElasticBlockStore", "ebs.csi.aws.com"],
  ["gcePersistentDisk", "pd.csi.storage.gke.io"],
  ["azureDisk", "disk.csi.azure.com"],
  ["cinder", "cinder.csi.openstack.org"],
  ["vsphereVolume", "csi.vsphere.vmware.com"],
  ["portworxVolume", "pxd.portworx.com"],
] as const satisfies readonly (readonly [keyof PersistentVolumeSpec, string])[];

/**
 * inTreeDriverOf names the CSI driver that the spec's in-tree volume source
 * migrates to, or undefined when the spec has no migratable in-tree source
 * (a CSI source, or a plugin CSI migration does not cover).
 */
export function inTreeDriverOf(spec: PersistentVolumeSpec): string | undefined {
  for (const [field, driver] of inTreeDrivers) {
    if (spec[field]) return driver;
  }
  return undefined;
}
