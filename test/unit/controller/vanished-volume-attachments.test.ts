import { describe, expect, it } from "bun:test";
import { Code } from "@connectrpc/connect";
import { parseVolumeAttachment } from "../../../src/kube/objects/volume-attachment";
import { createHandlerGround, type Call, driverName, finalizer } from "./support/handler-ground";
import { nodeIdAnnotation, vaJson, pvJson, csiNode1, publishOfPv1, removingOurPvFinalizerAt } from "./support/rule-objects";

/**
 * VAs that vanished still carrying our finalizer: noted by the attach
 * controller, released by the CSI handler in their PV's sync (an inline
 * one in its own name's sync). The same rule runs end to end in
 * test/e2e/detach-rules (a VA deleted straight from etcd).
 */

describe("a VA that vanished still carrying our finalizer (kubernetes#77988)", () => {
  const vanishedVa = () => vaJson("va1", { metadata: { finalizers: [finalizer], annotations: { [nodeIdAnnotation]: "node1-id" } }, status: { attached: true } });
  const unpublishOfPv1: Call = { csi: "ControllerUnpublishVolume", request: { volumeId: "vol-pv1", nodeId: "node1-id" } };
  const deletingPv = () => pvJson("pv1", { metadata: { deletionTimestamp: "2026-11-22T09:30:00Z", finalizers: [finalizer] } });

  it("is unpublished from its last state by its PV's sync, before our finalizer leaves the PV; its own name's sync only hands the PV on", async () => {
    const ground = createHandlerGround({ vas: [vanishedVa()], pvs: [deletingPv()], csiNodes: [csiNode1] });
    const owed = ground.vanished.note(ground.vanish("va1"));
    const handedOn = await ground.sync("va1");
    const beforePvSync = [...ground.calls];
    await ground.handler.syncPersistentVolume(ground.pv("pv1"));
    const again = await ground.sync("va1");
    expect({ owed, handedOn, beforePvSync, calls: ground.calls, again }).toEqual({
      owed: true,
      handedOn: "pv1",
      beforePvSync: [],
      calls: [unpublishOfPv1, removingOurPvFinalizerAt(0)],
      again: undefined,
    });
  });

  it("stays owed after a failed unpublish, keeping our finalizer on its PV, and is retried", async () => {
    const ground = createHandlerGround({ vas: [vanishedVa()], pvs: [deletingPv()], csiNodes: [csiNode1] });
    ground.vanished.note(ground.vanish("va1"));
    ground.script("ControllerUnpublishVolume", { code: Code.Unavailable, message: "driver restarting" });
    await expect(ground.handler.syncPersistentVolume(ground.pv("pv1"))).rejects.toThrow("driver restarting");
    const owedAfterFailure = ground.vanished.get("va1") !== undefined;
    await ground.handler.syncPersistentVolume(ground.pv("pv1"));
    expect({ owedAfterFailure, calls: ground.calls }).toEqual({ owedAfterFailure: true, calls: [unpublishOfPv1, unpublishOfPv1, removingOurPvFinalizerAt(0)] });
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

  it("is taken over by a new VA of ours for the same volume on the same node, which publishes it again: no unpublish", async () => {
    const ground = createHandlerGround({ vas: [vanishedVa()], pvs: [pvJson("pv1", { metadata: { finalizers: [finalizer] } })], csiNodes: [csiNode1] });
    ground.vanished.note(ground.vanish("va1"));
    ground.addVa(vaJson("va1", { metadata: { resourceVersion: "200" } }));
    await ground.handler.syncPersistentVolume(ground.pv("pv1"));
    await ground.sync("va1");
    const driverCalls: Call[] = ground.calls.filter((call) => "csi" in call);
    expect({ kept: ground.vanished.get("va1"), driverCalls }).toEqual({ kept: undefined, driverCalls: [publishOfPv1] });
  });

  it("is unpublished from its node although a new VA of the same name stands for the volume on another node", async () => {
    const csiNode2 = { metadata: { name: "node2", resourceVersion: "1" }, spec: { drivers: [{ name: driverName, nodeID: "node2-id" }] } };
    const ground = createHandlerGround({ vas: [vanishedVa()], pvs: [pvJson("pv1", { metadata: { finalizers: [finalizer] } })], csiNodes: [csiNode1, csiNode2] });
    ground.vanished.note(ground.vanish("va1"));
    ground.addVa(vaJson("va1", { node: "node2", metadata: { resourceVersion: "200" } }));
    await ground.handler.syncPersistentVolume(ground.pv("pv1"));
    await ground.sync("va1");
    const driverCalls: Call[] = ground.calls.filter((call) => "csi" in call);
    expect(driverCalls).toEqual([unpublishOfPv1, { ...publishOfPv1, request: { ...(publishOfPv1 as { request: object }).request, nodeId: "node2-id" } }]);
  });

  it("with an inline volume (no PV), is unpublished by its own name's sync", async () => {
    const inline = { csi: { driver: driverName, volumeHandle: "vol-inline" }, accessModes: ["ReadWriteOnce"] };
    const ground = createHandlerGround({ vas: [vaJson("va1", { inline, metadata: { finalizers: [finalizer] }, status: { attached: true } })], csiNodes: [csiNode1] });
    const owed = ground.vanished.note(ground.vanish("va1"));
    const released = await ground.sync("va1");
    expect({ owed, released, calls: ground.calls, kept: ground.vanished.get("va1") }).toEqual({
      owed: true,
      released: undefined,
      calls: [{ csi: "ControllerUnpublishVolume", request: { volumeId: "vol-inline", nodeId: "node1-id" } }],
      kept: undefined,
    });
  });
});
