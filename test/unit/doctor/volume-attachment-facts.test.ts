import { describe, expect, it } from "bun:test";
import { factsOf } from "../../../src/doctor/volume-attachment-facts";
import { parsePersistentVolume, type PersistentVolume } from "../../../src/kube/objects/persistent-volume";
import { parseTimestampedVolumeAttachment } from "../../../src/doctor/timestamped-volume-attachment";

describe("doctor facts", () => {
  it("name a migrated GCE PD volume as ListVolumes lists it: the handle repaired with the node ID, as the reconciler does", () => {
    const pv = parsePersistentVolume({
      metadata: { name: "pv-gce", resourceVersion: "1", labels: { "topology.kubernetes.io/zone": "us-east1-b" } },
      spec: { gcePersistentDisk: { pdName: "disk-1", fsType: "ext4" }, accessModes: ["ReadWriteOnce"] },
    });
    const va = parseTimestampedVolumeAttachment({
      metadata: { name: "va-gce", resourceVersion: "1", creationTimestamp: "2026-11-22T12:00:00Z" },
      spec: { attacher: "pd.csi.storage.gke.io", nodeName: "node-1", source: { persistentVolumeName: "pv-gce" } },
    });
    const pvs = new Map<string, PersistentVolume>([["pv-gce", pv]]);
    const nodeIds = new Map([["node-1", "projects/my-project/zones/us-east1-b/instances/node-1"]]);
    const facts = factsOf(va, pvs, nodeIds);
    expect({ volume: facts.volume, node: facts.node }).toEqual({
      volume: { handle: "projects/my-project/zones/us-east1-b/disks/disk-1" },
      node: { id: "projects/my-project/zones/us-east1-b/instances/node-1" },
    });
  });
});
