import { describe, expect, it } from "bun:test";
import { Code } from "@connectrpc/connect";
import { parseVolumeAttachment } from "../../../src/kube/objects/volume-attachment";
import { createHandlerGround, type Call, driverName, finalizer } from "./support/handler-ground";
import { nodeIdAnnotation, vaJson, pvJson, csiNode1, publishOfPv1, removingOurPvFinalizerAt } from "./support/rule-objects";

/**
 * VAs that vanished still carrying our finalizer: noted by the attach
 * controller, released by the CSI handler. The same rule runs end to end in
 * test/e2e/detach-rules (a VA deleted straight from etcd).
 */

describe("a VA that vanished still carrying our finalizer (kubernetes#77988)", () => {
  const vanishedVa = () => vaJson("va1", { metadata: { finalizers: [finalizer], annotations: { [nodeIdAnnotation]: "node1-id" } }, status: { attached: true } });
  const unpublishOfPv1: Call = { csi: "ControllerUnpublishVolume", request: { volumeId: "vol-pv1", nodeId: "node1-id" } };
  const deletingPv = () => pvJson("pv1", { metadata: { deletionTimestamp: "2026-11-22T09:30:00Z", finalizers: [finalizer] } });

  it("is unpublished from its last state, and its PV keeps our finalizer until then", async () => {
    const ground = createHandlerGround({ vas: [vanishedVa()], pvs: [deletingPv()], csiNodes: [csiNode1] });
    const gone = ground.vanish("va1");
    const owed = ground.vanished.note(gone);
    await ground.handler.syncPersistentVolume(ground.pv("pv1"));
    const beforeUnpublish = [...ground.calls];
    const releasedPv = await ground.sync("va1");
    await ground.handler.syncPersistentVolume(ground.pv("pv1"));
    const again = await ground.sync("va1");
    expect({ owed, beforeUnpublish, releasedPv, calls: ground.calls, again }).toEqual({
      owed: true,
      beforeUnpublish: [],
      releasedPv: "pv1",
      calls: [unpublishOfPv1, removingOurPvFinalizerAt(0)],
      again: undefined,
    });
  });

  it("stays owed after a failed unpublish, and is retried", async () => {
    const ground = createHandlerGround({ vas: [vanishedVa()], pvs: [pvJson("pv1", { metadata: { finalizers: [finalizer] } })], csiNodes: [csiNode1] });
    const gone = ground.vanish("va1");
    ground.vanished.note(gone);
    ground.script("ControllerUnpublishVolume", { code: Code.Unavailable, message: "driver restarting" });
    await expect(ground.sync("va1")).rejects.toThrow("driver restarting");
    expect(await ground.sync("va1")).toBe("pv1");
    expect(ground.calls).toEqual([unpublishOfPv1, unpublishOfPv1]);
  });

  it("owes nothing when it was never ours to detach, belongs to another attacher, or ended the normal way", () => {
    const ground = createHandlerGround();
    const parse = (raw: object) => parseVolumeAttachment(raw);
    const withoutFinalizer = parse(vaJson("va1"));
    const foreign = parse({ ...vanishedVa(), spec: { attacher: "other.csi", nodeName: "node1", source: { persistentVolumeName: "pv1" } } });
    // The watch's last state of a VA whose last finalizer we removed: still ours, but marked for deletion.
    const detachedNormally = parse(vaJson("va1", { metadata: { finalizers: [finalizer], deletionTimestamp: "2026-11-22T09:30:00Z" } }));
    expect([withoutFinalizer, foreign, detachedNormally].map((va) => ground.vanished.note(va))).toEqual([false, false, false]);
  });

  it("is taken over by a new VA of the same name for the same volume and node, which publishes it again", async () => {
    const ground = createHandlerGround({ vas: [vanishedVa()], pvs: [pvJson("pv1", { metadata: { finalizers: [finalizer] } })], csiNodes: [csiNode1] });
    const gone = ground.vanish("va1");
    ground.vanished.note(gone);
    ground.addVa(vaJson("va1", { metadata: { resourceVersion: "200" } }));
    await ground.sync("va1");
    ground.calls.length = 0;
    // Taken over: nothing is kept of the vanished VA, so a sync of the name once it is gone owes nothing.
    expect({ kept: ground.vanished.get("va1"), released: await ground.handler.syncVolumeAttachment("va1", undefined) }).toEqual({ kept: undefined, released: undefined });
    expect(ground.calls).toEqual([]);
  });

  it("is unpublished before a new VA of the same name that stands for another node is attached", async () => {
    const csiNode2 = { metadata: { name: "node2", resourceVersion: "1" }, spec: { drivers: [{ name: driverName, nodeID: "node2-id" }] } };
    const ground = createHandlerGround({ vas: [vanishedVa()], pvs: [pvJson("pv1", { metadata: { finalizers: [finalizer] } })], csiNodes: [csiNode1, csiNode2] });
    const gone = ground.vanish("va1");
    ground.vanished.note(gone);
    ground.addVa(vaJson("va1", { node: "node2", metadata: { resourceVersion: "200" } }));
    await ground.sync("va1");
    const driverCalls: Call[] = ground.calls.filter((call) => "csi" in call);
    expect(driverCalls).toEqual([unpublishOfPv1, { ...publishOfPv1, request: { ...(publishOfPv1 as { request: object }).request, nodeId: "node2-id" } }]);
  });
});
