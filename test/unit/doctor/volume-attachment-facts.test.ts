import { describe, expect, it } from "bun:test";
import { factsOf } from "../../../src/doctor/volume-attachment-facts";
import { parseCsiNode, type CsiNode } from "../../../src/kube/objects/csi-node";
import { parsePersistentVolume, type PersistentVolume } from "../../../src/kube/objects/persistent-volume";
import { parseTimestampedVolumeAttachment } from "../../../src/doctor/timestamped-volume-attachment";

const gce = "pd.csi.storage.gke.io";

/** The CSINodes of a cluster where `gce` registered `nodeId` on node-1. */
function csiNodesWith(nodeId: string): Map<string, CsiNode> {
  return new Map([["node-1", parseCsiNode({ metadata: { name: "node-1", resourceVersion: "1" }, spec: { drivers: [{ name: gce, nodeID: nodeId }] } })]]);
}

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
    const facts = factsOf(va, pvs, csiNodesWith("projects/my-project/zones/us-east1-b/instances/node-1"), gce);
    expect({ volume: facts.volume, node: facts.node }).toEqual({
      volume: { handle: "projects/my-project/zones/us-east1-b/disks/disk-1" },
      node: { id: "projects/my-project/zones/us-east1-b/instances/node-1" },
    });
  });
});

describe("doctor facts of a migrated inline volume", () => {
  it("name a migrated inline GCE PD as ListVolumes lists it, repaired with the node ID as the reconciler does", () => {
    const va = parseTimestampedVolumeAttachment({
      metadata: { name: "va-inline", resourceVersion: "1", creationTimestamp: "2026-11-22T12:00:00Z" },
      spec: {
        attacher: "pd.csi.storage.gke.io",
        nodeName: "node-1",
        source: { inlineVolumeSpec: { csi: { driver: "pd.csi.storage.gke.io", volumeHandle: "projects/UNSPECIFIED/zones/us-east1-b/disks/disk-2" } } },
      },
    });
    expect(factsOf(va, new Map(), csiNodesWith("projects/my-project/zones/us-east1-b/instances/node-1"), gce).volume).toEqual({ handle: "projects/my-project/zones/us-east1-b/disks/disk-2" });
  });
});

describe("doctor facts of the node ID", () => {
  it("fall back to the ID the attacher remembered on the VA when the CSINode is gone, as a detach does", () => {
    const va = parseTimestampedVolumeAttachment({
      metadata: { name: "va-1", resourceVersion: "1", creationTimestamp: "2026-11-22T12:00:00Z", annotations: { "csi.alpha.kubernetes.io/node-id": "remembered-id" } },
      spec: { attacher: gce, nodeName: "node-gone", source: { persistentVolumeName: "pv-1" } },
    });
    expect(factsOf(va, new Map(), new Map(), gce).node).toEqual({ id: "remembered-id" });
  });

  it("say why the node ID is unknown in the attacher's own words", () => {
    const va = parseTimestampedVolumeAttachment({
      metadata: { name: "va-1", resourceVersion: "1", creationTimestamp: "2026-11-22T12:00:00Z" },
      spec: { attacher: gce, nodeName: "node-gone", source: { persistentVolumeName: "pv-1" } },
    });
    expect(factsOf(va, new Map(), new Map(), gce).node).toEqual({ unknown: 'csinode.storage.k8s.io "node-gone" not found' });
  });
});
