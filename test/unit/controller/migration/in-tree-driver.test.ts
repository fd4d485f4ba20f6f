import { describe, expect, it } from "bun:test";
import { inTreeDriverOf } from "../../../../src/controller/migration/in-tree-driver";

describe("in-tree driver names", () => {
  it("names the CSI driver each attachable in-tree source migrates to, and none for CSI or unknown sources", () => {
    expect({
      awsElasticBlockStore: inTreeDriverOf({ awsElasticBlockStore: { volumeID: "v" } }),
      gcePersistentDisk: inTreeDriverOf({ gcePersistentDisk: { pdName: "p" } }),
      azureDisk: inTreeDriverOf({ azureDisk: { diskName: "d", diskURI: "u" } }),
      cinder: inTreeDriverOf({ cinder: { volumeID: "v" } }),
      vsphereVolume: inTreeDriverOf({ vsphereVolume: { volumePath: "p" } }),
      portworxVolume: inTreeDriverOf({ portworxVolume: { volumeID: "v" } }),
      csi: inTreeDriverOf({ csi: { driver: "x", volumeHandle: "h", readOnly: false, fsType: "" } }),
      empty: inTreeDriverOf({}),
    }).toEqual({
      awsElasticBlockStore: "ebs.csi.aws.com",
      gcePersistentDisk: "pd.csi.storage.gke.io",
      azureDisk: "disk.csi.azure.com",
      cinder: "cinder.csi.openstack.org",
      vsphereVolume: "csi.vsphere.vmware.com",
      portworxVolume: "pxd.portworx.com",
      csi: undefined,
      empty: undefined,
    });
  });
});
