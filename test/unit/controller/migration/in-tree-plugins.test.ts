import { describe, expect, it } from "bun:test";
import { inTreePluginOf, isMigratable } from "../../../../src/controller/migration/in-tree-plugins";
import type { PersistentVolumeSpec } from "../../../../src/kube/objects/persistent-volume";

describe("isMigratable", () => {
  const migratable: [string, PersistentVolumeSpec, string][] = [
    ["awsElasticBlockStore", { awsElasticBlockStore: { volumeID: "vol-1" } }, "ebs.csi.aws.com"],
    ["gcePersistentDisk", { gcePersistentDisk: { pdName: "pd" } }, "pd.csi.storage.gke.io"],
    ["azureDisk", { azureDisk: { diskName: "d", diskURI: "/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/disks/d" } }, "disk.csi.azure.com"],
    ["cinder", { cinder: { volumeID: "v" } }, "cinder.csi.openstack.org"],
    ["vsphereVolume", { vsphereVolume: { volumePath: "[ds] a.vmdk" } }, "csi.vsphere.vmware.com"],
    ["portworxVolume", { portworxVolume: { volumeID: "v" } }, "pxd.portworx.com"],
  ];
  for (const [field, spec, driver] of migratable) {
    it(`is true for a ${field} PV, which ${driver} replaces`, () => {
      expect([isMigratable(spec), inTreePluginOf(spec)?.driverName]).toEqual([true, driver]);
    });
  }

  it("is false for a CSI PV, an empty spec and a null in-tree source", () => {
    const specs: PersistentVolumeSpec[] = [{ csi: { driver: "d", volumeHandle: "h", readOnly: false, fsType: "" } }, {}, { gcePersistentDisk: null }];
    expect(specs.map(isMigratable)).toEqual([false, false, false]);
  });
});
