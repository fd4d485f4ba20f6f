import { describe, expect, it } from "bun:test";
import { createHandlerGround, driverName, finalizer, nowText } from "./support/handler-ground";

/**
 * The CSI handler with in-tree PVs (CSI migration): the requests are built
 * from the translated source. The same rules run end to end in
 * test/e2e/migration.test.ts.
 */

const nodeIdAnnotation = "csi.alpha.kubernetes.io/node-id";
const csiNode1 = { metadata: { name: "node1", resourceVersion: "1" }, spec: { drivers: [{ name: driverName, nodeID: "node1-id" }] } };

function vaJson(name: string, pv: string, metadata: object = {}) {
  return {
    metadata: { name, resourceVersion: "1", ...metadata },
    spec: { attacher: driverName, nodeName: "node1", source: { persistentVolumeName: pv } },
    status: { attached: false },
  };
}

function ebsPvJson(name: string, volumeID: string) {
  return {
    metadata: { name, resourceVersion: "1", finalizers: [finalizer], annotations: { "pv.kubernetes.io/migrated-to": driverName } },
    spec: { accessModes: ["ReadWriteOnce"], awsElasticBlockStore: { volumeID, fsType: "xfs" } },
  };
}

describe("attach of an in-tree PV", () => {
  it("publishes the translated handle, fsType and volume context", async () => {
    const ground = createHandlerGround({ vas: [vaJson("va1", "pv-ebs")], pvs: [ebsPvJson("pv-ebs", "aws://us-west-2a/vol-0abc")], csiNodes: [csiNode1] });
    await ground.sync("va1");
    expect(ground.calls).toEqual([
      { api: "patchVolumeAttachment", name: "va1", patch: { metadata: { finalizers: [finalizer], annotations: { [nodeIdAnnotation]: "node1-id" } } } },
      {
        csi: "ControllerPublishVolume",
        request: {
          volumeId: "vol-0abc",
          nodeId: "node1-id",
          volumeCapability: { mount: { fsType: "xfs" }, accessMode: { mode: "SINGLE_NODE_WRITER" } },
          volumeContext: { partition: "0" },
        },
      },
      { api: "patchVolumeAttachment", name: "va1", patch: { status: { attached: true } }, subresource: "status" },
    ]);
  });

  it("adds the PV finalizer, then saves the translation error without touching the VA's metadata or calling the driver", async () => {
    const pv = { ...ebsPvJson("pv-bad", "aws://us-west-2a/02399794d890f9375"), metadata: { name: "pv-bad", resourceVersion: "1" } };
    const ground = createHandlerGround({ vas: [vaJson("va1", "pv-bad")], pvs: [pv], csiNodes: [csiNode1] });
    await expect(ground.sync("va1")).rejects.toThrow("failed to translate in tree pv to CSI");
    expect(ground.calls).toEqual([
      {
        api: "patchPersistentVolume",
        name: "pv-bad",
        patch: [
          { op: "test", path: "/metadata/finalizers", value: null },
          { op: "add", path: "/metadata/finalizers", value: [finalizer] },
        ],
      },
      {
        api: "patchVolumeAttachment",
        name: "va1",
        patch: {
          status: {
            attachError: {
              message:
                "failed to translate in tree pv to CSI: failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume (aws://us-west-2a/02399794d890f9375)",
              time: nowText,
            },
          },
        },
        subresource: "status",
      },
    ]);
  });
});

describe("detach of an in-tree PV", () => {
  it("unpublishes the translated handle", async () => {
    const va = vaJson("va1", "pv-ebs", { deletionTimestamp: "2026-11-22T09:30:00Z", finalizers: [finalizer], annotations: { [nodeIdAnnotation]: "node1-id" } });
    const ground = createHandlerGround({ vas: [va], pvs: [ebsPvJson("pv-ebs", "vol-0def")], csiNodes: [csiNode1] });
    await ground.sync("va1");
    expect(ground.calls).toEqual([
      { csi: "ControllerUnpublishVolume", request: { volumeId: "vol-0def", nodeId: "node1-id" } },
      { api: "patchVolumeAttachment", name: "va1", patch: { metadata: { finalizers: null } } },
    ]);
  });
});
