import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { AdminClient } from "../ground/admin-client";
import { waitForCondition } from "../ground/managed-process";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { hardDeleteFromEtcd } from "./support/etcd-hard-delete";
import { startFakeDriverSetup, stopFakeDriverSetup, type FakeDriverSetup } from "./support/fake-driver-ground";
import { csiNode, paths, persistentVolume, type PersistentVolumeJson, type VolumeAttachmentJson } from "../ground/objects";
import { callsFor, nodeIdAnnotation, ruleVolumeAttachment } from "./support/rule-objects";

/**
 * The detach rules of the spec (§ Detach, § Errors from the driver, § Words
 * operators grep for) against kube-apiserver and the fault-injecting driver.
 */
let cluster: TestCluster;
let admin: AdminClient;
let setup: FakeDriverSetup;
const node = "detach-node";
const hold = "test.example/hold";

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  setup = await startFakeDriverSetup(cluster, admin, {
    driverName: "detach.fake.csi.test",
    nodes: [node, "vanishing-node", "unregistering-node"],
    attacherArgs: ["--timeout=1s", "--retry-interval-start=100ms", "--retry-interval-max=1s"],
  });
});

afterAll(async () => {
  await stopFakeDriverSetup(setup);
  await cluster?.stop();
});

function waitForVa(name: string, predicate: (va: VolumeAttachmentJson | null) => boolean): Promise<VolumeAttachmentJson | null> {
  return admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment(name), predicate, 30_000);
}

/**
 * Deletes VA `name` and returns its first later version for which
 * `predicate` holds, watched rather than polled: a detachError that the next
 * retry clears lives one retry interval (100 ms here), which a poll can miss.
 */
async function deleteAndWatchFor(name: string, predicate: (va: VolumeAttachmentJson | null) => boolean): Promise<VolumeAttachmentJson | null> {
  const deleted = await admin.delete(paths.volumeAttachment(name));
  const from = deleted.metadata?.resourceVersion;
  if (from === undefined) throw new Error(`DELETE of VolumeAttachment ${name} answered without a resourceVersion`);
  return admin.waitForVersion<VolumeAttachmentJson>(paths.volumeAttachments, name, from, predicate);
}

/** Creates a PV and its VA on `onNode` and waits until the attacher attached it. */
async function attach(name: string, onNode = node, finalizers?: string[]): Promise<void> {
  await admin.create(paths.persistentVolumes, persistentVolume(`pv-${name}`, { driver: setup.driverName, volumeHandle: `vol-${name}` }));
  await admin.create(paths.volumeAttachments, ruleVolumeAttachment(name, { attacher: setup.driverName, node: onNode, pv: `pv-${name}`, ...(finalizers ? { finalizers } : {}) }));
  await waitForVa(name, (va) => va?.status?.attached === true);
}

/**
 * Annotates the VA with a node ID the CSINode does not have, so that a
 * detach shows which of the two it used.
 */
async function rememberNodeId(name: string, nodeId: string): Promise<void> {
  await admin.patch(paths.volumeAttachment(name), { metadata: { annotations: { [nodeIdAnnotation]: nodeId } } });
}

/**
 * Waits until the attacher's CSINode cache reflects a change on `onNode`: a
 * probe VA on that node fails to attach with `message` only once it does.
 */
async function waitForCsiNodeChange(onNode: string, message: string): Promise<void> {
  const probe = `probe-${onNode}`;
  await admin.create(paths.persistentVolumes, persistentVolume(`pv-${probe}`, { driver: setup.driverName, volumeHandle: `vol-${probe}` }));
  await admin.create(paths.volumeAttachments, ruleVolumeAttachment(probe, { attacher: setup.driverName, node: onNode, pv: `pv-${probe}` }));
  await waitForVa(probe, (va) => va?.status?.attachError?.message === message);
  await admin.delete(paths.volumeAttachment(probe));
}

async function unpublishes(name: string) {
  return (await callsFor(setup.driver, "ControllerUnpublishVolume", `vol-${name}`)).map((call) => ({ code: call.code, request: call.request }));
}

describe("detach", () => {
  it("unpublishes, then removes our finalizer, and the VA is gone", async () => {
    await attach("plain");
    await admin.delete(paths.volumeAttachment("plain"));
    await waitForVa("plain", (va) => va === null);
    expect(await unpublishes("plain")).toEqual([{ code: "OK", request: { volumeId: "vol-plain", nodeId: `${node}-id` } }]);
  });

  it("removes only our finalizer, then marks the VA detached without attachmentMetadata while another finalizer holds it", async () => {
    await attach("held", node, [hold]);
    await admin.delete(paths.volumeAttachment("held"));
    const detached = await waitForVa("held", (va) => va?.status?.attached === false);
    expect({ finalizers: detached?.metadata.finalizers, status: detached?.status, calls: await unpublishes("held") }).toEqual({
      finalizers: [hold],
      status: { attached: false },
      calls: [{ code: "OK", request: { volumeId: "vol-held", nodeId: `${node}-id` } }],
    });
    await admin.patch(paths.volumeAttachment("held"), { metadata: { finalizers: null } });
  });

  it("saves detachError without an errorCode, keeps the finalizer and attached: true, and retries until the driver succeeds", async () => {
    await attach("failing");
    await setup.driver.control.script("ControllerUnpublishVolume", [{ code: "FailedPrecondition", message: "still in use", times: 2, volumeId: "vol-failing" }]);
    const failing = await deleteAndWatchFor("failing", (va) => va?.status?.detachError !== undefined);
    await waitForVa("failing", (va) => va === null);
    expect({
      finalizers: failing?.metadata.finalizers,
      attached: failing?.status?.attached,
      detachError: { ...failing?.status?.detachError, time: "<time>" },
      codes: (await unpublishes("failing")).map((call) => call.code),
    }).toEqual({
      finalizers: [setup.finalizer],
      attached: true,
      // Upstream v4.13 records errorCode for attach errors only.
      detachError: { message: "rpc error: code = FailedPrecondition desc = still in use", time: "<time>" },
      codes: ["FailedPrecondition", "FailedPrecondition", "OK"],
    });
  });

  it("retries an unpublish that outlives --timeout; the VA keeps its finalizer until one succeeds", async () => {
    await attach("slow");
    await setup.driver.control.script("ControllerUnpublishVolume", [{ hang: true, times: 1, volumeId: "vol-slow" }]);
    const failing = await deleteAndWatchFor("slow", (va) => va?.status?.detachError !== undefined);
    await waitForVa("slow", (va) => va === null);
    await setup.driver.control.release();
    expect({
      finalizers: failing?.metadata.finalizers,
      message: failing?.status?.detachError?.message,
      codes: (await unpublishes("slow")).map((call) => call.code),
    }).toEqual({
      finalizers: [setup.finalizer],
      message: "rpc error: code = DeadlineExceeded desc = context deadline exceeded",
      codes: ["Canceled", "OK"],
    });
  });

  it("detaches an inline volume", async () => {
    const inline = { accessModes: ["ReadWriteOnce"], csi: { driver: setup.driverName, volumeHandle: "vol-inline" } };
    await admin.create(paths.volumeAttachments, ruleVolumeAttachment("inline", { attacher: setup.driverName, node, inline }));
    await waitForVa("inline", (va) => va?.status?.attached === true);
    await admin.delete(paths.volumeAttachment("inline"));
    await waitForVa("inline", (va) => va === null);
    expect(await unpublishes("inline")).toEqual([{ code: "OK", request: { volumeId: "vol-inline", nodeId: `${node}-id` } }]);
  });
});

describe("a VA that vanished still carrying our finalizer", () => {
  it("is unpublished from its last state, retried on failure, and its PV keeps our finalizer until the unpublish succeeds", async () => {
    await attach("swept");
    await setup.driver.control.script("ControllerUnpublishVolume", [{ code: "Unavailable", message: "driver busy", times: 2, volumeId: "vol-swept" }]);
    // The PV is deleted too, so our finalizer goes as soon as the attacher thinks nothing needs the PV.
    await admin.delete(paths.persistentVolume("pv-swept"));
    await hardDeleteFromEtcd(cluster, "/registry/volumeattachments/swept");
    await waitForVa("swept", (va) => va === null);
    await waitForCondition(async () => (await unpublishes("swept")).length >= 2, { description: "two failed unpublishes of vol-swept", timeoutMs: 30_000 });
    const pvWhileOwed = await admin.get<PersistentVolumeJson>(paths.persistentVolume("pv-swept"));
    const released = await admin.waitFor<PersistentVolumeJson>(paths.persistentVolume("pv-swept"), (pv) => !pv?.metadata.finalizers?.includes(setup.finalizer), 30_000);
    expect({ pvFinalizersWhileOwed: pvWhileOwed.metadata.finalizers, released: released?.metadata.finalizers, calls: await unpublishes("swept") }).toEqual({
      pvFinalizersWhileOwed: ["kubernetes.io/pv-protection", setup.finalizer],
      released: ["kubernetes.io/pv-protection"],
      calls: [
        { code: "Unavailable", request: { volumeId: "vol-swept", nodeId: `${node}-id` } },
        { code: "Unavailable", request: { volumeId: "vol-swept", nodeId: `${node}-id` } },
        { code: "OK", request: { volumeId: "vol-swept", nodeId: `${node}-id` } },
      ],
    });
  });
});

describe("node IDs on detach", () => {
  it("unpublishes from the node ID in the VA annotation when the CSINode is gone", async () => {
    await attach("vanished", "vanishing-node");
    await rememberNodeId("vanished", "remembered-id");
    await admin.delete(paths.csiNode("vanishing-node"));
    await waitForCsiNodeChange("vanishing-node", 'csinode.storage.k8s.io "vanishing-node" not found');
    await admin.delete(paths.volumeAttachment("vanished"));
    await waitForVa("vanished", (va) => va === null);
    expect(await unpublishes("vanished")).toEqual([{ code: "OK", request: { volumeId: "vol-vanished", nodeId: "remembered-id" } }]);
  });

  it("unpublishes from the node ID in the VA annotation when the CSINode no longer lists the driver", async () => {
    await attach("unregistered", "unregistering-node");
    await rememberNodeId("unregistered", "remembered-id");
    await admin.patch(paths.csiNode("unregistering-node"), { spec: { drivers: [{ name: "someone.else.csi", nodeID: "x", topologyKeys: null }] } });
    await waitForCsiNodeChange("unregistering-node", `CSINode unregistering-node does not contain driver ${setup.driverName}`);
    await admin.delete(paths.volumeAttachment("unregistered"));
    await waitForVa("unregistered", (va) => va === null);
    expect(await unpublishes("unregistered")).toEqual([{ code: "OK", request: { volumeId: "vol-unregistered", nodeId: "remembered-id" } }]);
  });

  it("saves the CSINode's NotFound as detachError when there is no annotation to fall back on", async () => {
    await admin.create(paths.persistentVolumes, persistentVolume("pv-ghost", { driver: setup.driverName, volumeHandle: "vol-ghost" }));
    // Our finalizer without the annotation: as left by an attach that never got that far.
    await admin.create(paths.volumeAttachments, ruleVolumeAttachment("ghost", { attacher: setup.driverName, node: "ghost-node", pv: "pv-ghost", finalizers: [setup.finalizer] }));
    await admin.delete(paths.volumeAttachment("ghost"));
    const failing = await waitForVa("ghost", (va) => va?.status?.detachError !== undefined);
    expect({ message: failing?.status?.detachError?.message, calls: await unpublishes("ghost") }).toEqual({
      message: 'csinode.storage.k8s.io "ghost-node" not found',
      calls: [],
    });
    // The node comes back: the retry finds its CSINode and finishes the detach.
    await admin.create(paths.csiNodes, csiNode("ghost-node", [{ name: setup.driverName, nodeID: "ghost-node-id" }]));
    await waitForVa("ghost", (va) => va === null);
    expect(await unpublishes("ghost")).toEqual([{ code: "OK", request: { volumeId: "vol-ghost", nodeId: "ghost-node-id" } }]);
  });
});
