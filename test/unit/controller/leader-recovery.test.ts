import { describe, expect, it } from "bun:test";
import { Code } from "@connectrpc/connect";
import { createHandlerGround, type Call, driverName, finalizer } from "./support/handler-ground";
import { csiNode1, nodeIdAnnotation, publishOfPv1, pvJson, removingOurPvFinalizerAt, vaJson } from "./support/rule-objects";

/**
 * The CSI handler's part in recovering a publish whose VA vanished while no
 * replica watched (kube-apiserver's delete race): with a driver that lists,
 * a PV that carried our finalizer when this replica started leading keeps
 * it until a listing said where its volume is published; with one that
 * cannot, nothing is suspected and nothing is unpublished. End to end:
 * test/e2e/leader-recovery and test/e2e/restart-costs.
 */

const csiNode2 = { metadata: { name: "node2", resourceVersion: "1" }, spec: { drivers: [{ name: driverName, nodeID: "node2-id" }] } };
const unpublishFrom = (nodeId: string): Call => ({ csi: "ControllerUnpublishVolume", request: { volumeId: "vol-pv1", nodeId } });
const deletingPv = () => pvJson("pv1", { metadata: { deletionTimestamp: "2026-11-22T09:30:00Z", finalizers: [finalizer] } });

describe("a PV that carried our finalizer when this replica started leading, being deleted, that no VA names", () => {
  it("without a listing, is not suspected: loses our finalizer with no driver call, as upstream's attacher does", async () => {
    const ground = createHandlerGround({ pvs: [deletingPv()], csiNodes: [csiNode2, csiNode1] });
    ground.handler.start();
    await ground.handler.syncPersistentVolume(ground.pv("pv1"));
    expect({ calls: ground.calls, inherited: ground.inherited.isInherited("pv1") }).toEqual({ calls: [removingOurPvFinalizerAt(0)], inherited: false });
  });

  it("without a listing, needs no CSINode either: nothing is unpublished, so no node has to be known", async () => {
    const ground = createHandlerGround({ pvs: [deletingPv()] });
    ground.handler.start();
    await ground.handler.syncPersistentVolume(ground.pv("pv1"));
    expect({ calls: ground.calls, events: ground.events }).toEqual({ calls: [removingOurPvFinalizerAt(0)], events: [] });
  });

  it("with a listing, keeps our finalizer until the reconciler's listing said where its volume is", async () => {
    const ground = createHandlerGround({ pvs: [deletingPv()], csiNodes: [csiNode1], listsPublishedNodes: true });
    ground.handler.start();
    await ground.handler.syncPersistentVolume(ground.pv("pv1"));
    const beforeListing = [...ground.calls];
    ground.inherited.checked("pv1");
    await ground.handler.syncPersistentVolume(ground.pv("pv1"));
    expect({ beforeListing, after: ground.calls }).toEqual({ beforeListing: [], after: [removingOurPvFinalizerAt(0)] });
  });

  it("with a listing, is unpublished only from the nodes the listing showed with no VA there, keeping our finalizer and the marks while an unpublish fails", async () => {
    const ground = createHandlerGround({ pvs: [deletingPv()], csiNodes: [csiNode1, csiNode2], listsPublishedNodes: true });
    ground.handler.start();
    ground.inherited.markOrphans("pv1", ["node2-id"]);
    ground.inherited.checked("pv1");
    ground.script("ControllerUnpublishVolume", { code: Code.Unavailable, message: "driver restarting" });
    await expect(ground.handler.syncPersistentVolume(ground.pv("pv1"))).rejects.toThrow("driver restarting");
    const marksAfterFailure = ground.inherited.orphansOf("pv1");
    await ground.handler.syncPersistentVolume(ground.pv("pv1"));
    expect({ marksAfterFailure, calls: ground.calls }).toEqual({
      marksAfterFailure: ["node2-id"],
      calls: [unpublishFrom("node2-id"), unpublishFrom("node2-id"), removingOurPvFinalizerAt(0)],
    });
  });
});

describe("a live in-tree PV inherited by a new leader, whose CSI migration was rolled back", () => {
  it("loses our finalizer without an unpublish: the in-tree plugin attaches that disk now, with no VA", async () => {
    const pv = { metadata: { name: "pv1", resourceVersion: "1", finalizers: [finalizer] }, spec: { awsElasticBlockStore: { volumeID: "vol-1" } } };
    const ground = createHandlerGround({ pvs: [pv], csiNodes: [csiNode1] });
    ground.handler.start();
    await ground.handler.syncPersistentVolume(ground.pv("pv1"));
    expect(ground.calls).toEqual([removingOurPvFinalizerAt(0)]);
  });
});

describe("a volume the reconciler listed on nodes that no VA of ours names", () => {
  it("is unpublished from those nodes only, checked again against the VAs, and a live PV keeps our finalizer", async () => {
    const attached = vaJson("va1", { metadata: { finalizers: [finalizer], annotations: { [nodeIdAnnotation]: "node1-id" } }, status: { attached: true } });
    const ground = createHandlerGround({ vas: [attached], pvs: [pvJson("pv1", { metadata: { finalizers: [finalizer] } })], csiNodes: [csiNode1, csiNode2] });
    // Marked from a listing taken before va1 was known: node1 is va1's now.
    ground.inherited.markOrphans("pv1", ["node1-id", "node2-id"]);
    await ground.handler.syncPersistentVolume(ground.pv("pv1"));
    expect({ calls: ground.calls, marks: ground.inherited.orphansOf("pv1") }).toEqual({ calls: [unpublishFrom("node2-id")], marks: undefined });
  });

  it("never interleaves with a publish of the same volume: the attach of a VA that appeared meanwhile waits, then publishes", async () => {
    const ground = createHandlerGround({ pvs: [pvJson("pv1", { metadata: { finalizers: [finalizer] } })], csiNodes: [csiNode1] });
    ground.inherited.markOrphans("pv1", ["node1-id"]);
    ground.script("ControllerUnpublishVolume", { hang: true });
    const recovering = ground.handler.syncPersistentVolume(ground.pv("pv1"));
    // The VA appears once the recovery checked the VAs and is unpublishing.
    while (!ground.calls.some((call) => "csi" in call)) await Bun.sleep(1);
    ground.addVa(vaJson("va1"));
    const attaching = ground.sync("va1");
    // What the driver had been asked when the recovery's unpublish gave up: no publish yet.
    const whenRecoveryEnded: Call[] | string = await recovering.then(
      () => "recovery did not fail",
      () => ground.calls.filter((call) => "csi" in call),
    );
    await attaching;
    const driverCalls: Call[] = ground.calls.filter((call) => "csi" in call);
    expect({ whenRecoveryEnded, driverCalls, attached: ground.va("va1").status?.attached }).toEqual({
      whenRecoveryEnded: [unpublishFrom("node1-id")],
      driverCalls: [unpublishFrom("node1-id"), publishOfPv1],
      attached: true,
    });
  });
});

describe("a VA that vanished with our finalizer while its node cannot be told", () => {
  it("keeps its PV's finalizer, with a Warning event on the PV naming what to check, and is retried", async () => {
    const vanishing = vaJson("va1", { node: "gone-node", metadata: { finalizers: [finalizer] }, status: { attached: true } });
    const ground = createHandlerGround({ vas: [vanishing], pvs: [deletingPv()] });
    ground.vanished.note(ground.vanish("va1"));
    await expect(ground.handler.syncPersistentVolume(ground.pv("pv1"))).rejects.toThrow('csinode.storage.k8s.io "gone-node" not found');
    expect({ calls: ground.calls, events: ground.events.map(({ name, reason, message }) => ({ name, reason, message })) }).toEqual({
      calls: [],
      events: [
        {
          name: "pv1",
          reason: "UnpublishNodeUnknown",
          message: `VolumeAttachment va1 vanished and its node ID cannot be told: csinode.storage.k8s.io "gone-node" not found; check on the storage backend that volume vol-pv1 is published to no node that no VolumeAttachment names, then remove finalizer ${finalizer} from PersistentVolume pv1`,
        },
      ],
    });
  });
});

describe("a VA that kube-apiserver's delete race takes after our finalizer went on", () => {
  it("is not published once the cache no longer has it, and its PV's sync unpublishes it from its node once", async () => {
    const ground = createHandlerGround({ vas: [vaJson("va1")], pvs: [pvJson("pv1", { metadata: { finalizers: [finalizer] } })], csiNodes: [csiNode1, csiNode2] });
    // A recovery holds the volume's lock, so the attach waits between its finalizer patch and its publish.
    ground.inherited.markOrphans("pv1", ["node2-id"]);
    ground.script("ControllerUnpublishVolume", { hang: true });
    const recovering = ground.handler.syncPersistentVolume(ground.pv("pv1")).catch(() => "recovery gave up");
    while (!ground.calls.some((call) => "csi" in call)) await Bun.sleep(1);
    const attaching = ground.sync("va1");
    while (!ground.calls.some((call) => "api" in call && call.api === "patchVolumeAttachment")) await Bun.sleep(1);
    ground.vanished.note(ground.vanish("va1"));
    const recovery = await recovering;
    const attach = await attaching.then(
      () => "published",
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    const handedOn = await ground.sync("va1");
    await ground.handler.syncPersistentVolume(ground.pv("pv1"));
    const driverCalls: Call[] = ground.calls.filter((call) => "csi" in call);
    expect({ recovery, attach, handedOn, driverCalls }).toEqual({
      recovery: "recovery gave up",
      attach: 'VolumeAttachment "va1" was deleted before it was published',
      handedOn: "pv1",
      // The recovery's listed node again (its first try gave up), and the vanished VA's node once.
      driverCalls: [unpublishFrom("node2-id"), unpublishFrom("node1-id"), unpublishFrom("node2-id")],
    });
  });
});
