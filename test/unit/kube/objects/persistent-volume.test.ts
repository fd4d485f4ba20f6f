import { describe, expect, it } from "bun:test";
import { parsePersistentVolume } from "../../../../src/kube/objects/persistent-volume";

describe("PersistentVolume parsing", () => {
  it("keeps the labels and annotations CSI migration reads, and the in-tree source whole", () => {
    const pv = parsePersistentVolume({
      apiVersion: "v1",
      kind: "PersistentVolume",
      metadata: {
        name: "pv-gce",
        resourceVersion: "7",
        labels: { "topology.kubernetes.io/zone": "us-east1-a" },
        annotations: { "pv.kubernetes.io/migrated-to": "pd.csi.storage.gke.io" },
        managedFields: [{ manager: "kube-controller-manager" }],
      },
      spec: {
        gcePersistentDisk: { pdName: "disk-1", fsType: "ext4" },
        accessModes: ["ReadWriteOnce"],
        capacity: { storage: "1Gi" },
      },
    });
    expect(pv).toEqual({
      metadata: {
        name: "pv-gce",
        resourceVersion: "7",
        labels: { "topology.kubernetes.io/zone": "us-east1-a" },
        annotations: { "pv.kubernetes.io/migrated-to": "pd.csi.storage.gke.io" },
      },
      spec: {
        gcePersistentDisk: { pdName: "disk-1", fsType: "ext4" },
        accessModes: ["ReadWriteOnce"],
      },
    });
  });
});
