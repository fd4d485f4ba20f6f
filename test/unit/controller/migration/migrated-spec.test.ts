import { describe, expect, it } from "bun:test";
import { migratedSpecOf } from "../../../../src/controller/migration/migrated-spec";
import type { PersistentVolume } from "../../../../src/kube/objects/persistent-volume";

describe("the spec a request is built from", () => {
  it("is the CSI PV's own spec, not migrated", () => {
    const pv: PersistentVolume = {
      metadata: { name: "pv-csi", resourceVersion: "1" },
      spec: { csi: { driver: "hostpath.csi.k8s.io", volumeHandle: "v1", readOnly: false, fsType: "" }, accessModes: ["ReadWriteOnce"] },
    };
    expect(migratedSpecOf(pv)).toEqual({ spec: pv.spec, migrated: false });
  });

  it("is the translated spec of an in-tree PV, with its zone label and migrated", () => {
    const pv: PersistentVolume = {
      metadata: {
        name: "pv-gce",
        resourceVersion: "1",
        labels: { "topology.kubernetes.io/zone": "us-east1-b" },
        annotations: { "pv.kubernetes.io/migrated-to": "pd.csi.storage.gke.io" },
      },
      spec: { gcePersistentDisk: { pdName: "disk-1", fsType: "ext4" }, accessModes: ["ReadWriteOnce", "ReadOnlyMany"] },
    };
    expect(migratedSpecOf(pv)).toEqual({
      spec: {
        csi: {
          driver: "pd.csi.storage.gke.io",
          volumeHandle: "projects/UNSPECIFIED/zones/us-east1-b/disks/disk-1",
          readOnly: false,
          fsType: "ext4",
          volumeAttributes: { partition: "" },
        },
        accessModes: ["ReadWriteOnce"],
      },
      migrated: true,
    });
  });

  it("fails in upstream's words, naming the PV and field, when the in-tree source is malformed", () => {
    const pv: PersistentVolume = { metadata: { name: "pv-bad", resourceVersion: "1" }, spec: { awsElasticBlockStore: { fsType: "ext4" } } };
    expect(() => migratedSpecOf(pv)).toThrow('failed to translate in tree pv to CSI: PersistentVolume "pv-bad": spec.awsElasticBlockStore.volumeID: is required');
  });
});
