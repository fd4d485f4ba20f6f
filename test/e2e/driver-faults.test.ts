import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { AdminClient } from "../ground/admin-client";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { startFakeDriverSetup, stopFakeDriverSetup, type FakeDriverSetup } from "./support/fake-driver-ground";
import { paths, persistentVolume, volumeAttachment, type VolumeAttachmentJson, hasSettledAttachError } from "../ground/objects";

/**
 * How the compiled attacher handles a driver that fails, hangs, or needs
 * secrets, and VAs it cannot attach: what operators find in the VA status.
 */
let cluster: TestCluster;
let admin: AdminClient;
let setup: FakeDriverSetup;
const node = "fault-node";

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  setup = await startFakeDriverSetup(cluster, admin, {
    driverName: "faults.fake.csi.test",
    nodes: [node],
    // Short back-off and deadline keep retries within a test's patience.
    attacherArgs: ["--timeout=1s", "--retry-interval-start=100ms", "--retry-interval-max=1s", "--default-fstype=ext4", "-v=5"],
  });
});

afterAll(async () => {
  await stopFakeDriverSetup(setup);
  await cluster?.stop();
});

async function createVolumeAttachment(name: string, pvOptions: Partial<Parameters<typeof persistentVolume>[1]> = {}): Promise<void> {
  await admin.create(paths.persistentVolumes, persistentVolume(`pv-${name}`, { driver: setup.driverName, volumeHandle: `vol-${name}`, ...pvOptions }));
  await admin.create(paths.volumeAttachments, volumeAttachment(name, setup.driverName, node, `pv-${name}`));
}

function waitForVa(name: string, predicate: (va: VolumeAttachmentJson | null) => boolean): Promise<VolumeAttachmentJson | null> {
  return admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment(name), predicate, 30_000);
}

async function callsFor(method: "ControllerPublishVolume" | "ControllerUnpublishVolume", volumeId: string) {
  return (await setup.driver.control.calls(method)).filter((call) => (call.request as { volumeId?: string }).volumeId === volumeId);
}

describe("driver errors", () => {
  it("retries a publish that failed with Unavailable and clears attachError once attached", async () => {
    await setup.driver.control.script("ControllerPublishVolume", [{ code: "Unavailable", message: "driver busy", times: 2, volumeId: "vol-retry" }]);
    await createVolumeAttachment("retry");
    const attached = await waitForVa("retry", (va) => va?.status?.attached === true);
    expect(attached?.status).toEqual({ attached: true, attachmentMetadata: { devicePath: "/dev/fake/vol-retry" } });
    expect((await callsFor("ControllerPublishVolume", "vol-retry")).map((call) => call.code)).toEqual(["Unavailable", "Unavailable", "OK"]);
  });

  it("saves Go's 'context deadline exceeded' when the driver outlives --timeout, and attaches on a later try", async () => {
    // Two hung calls: the VA is re-queued at once by the watch event of its own
    // finalizer patch (as upstream's is), so one would be retried too soon to observe.
    await setup.driver.control.script("ControllerPublishVolume", [{ hang: true, times: 2, volumeId: "vol-slow" }]);
    await createVolumeAttachment("slow");
    const timedOut = await waitForVa("slow", hasSettledAttachError);
    expect({ message: timedOut?.status?.attachError?.message, errorCode: timedOut?.status?.attachError?.errorCode }).toEqual({
      message: "rpc error: code = DeadlineExceeded desc = context deadline exceeded",
      errorCode: 4,
    });
    const attached = await waitForVa("slow", (va) => va?.status?.attached === true);
    expect(attached?.status?.attachError).toBeUndefined();
    // The driver saw each timed-out call given up by the attacher.
    expect((await callsFor("ControllerPublishVolume", "vol-slow")).map((call) => call.code)).toEqual(["Canceled", "Canceled", "OK"]);
  });

  it("unpublishes a VA deleted while its publish kept timing out, before letting it go", async () => {
    await setup.driver.control.script("ControllerPublishVolume", [{ hang: true, always: true, volumeId: "vol-stuck" }]);
    await createVolumeAttachment("stuck");
    await waitForVa("stuck", hasSettledAttachError);
    await admin.delete(paths.volumeAttachment("stuck"));
    await waitForVa("stuck", (va) => va === null);
    // The publish may have happened after the deadline: only an unpublish makes sure it did not stick.
    expect((await callsFor("ControllerUnpublishVolume", "vol-stuck")).map((call) => call.code)).toEqual(["OK"]);
    await setup.driver.control.clearScripts();
    await setup.driver.control.release();
  });

  it("keeps a VA whose unpublish fails, with detachError, until the driver succeeds", async () => {
    await createVolumeAttachment("sticky");
    await waitForVa("sticky", (va) => va?.status?.attached === true);
    await setup.driver.control.script("ControllerUnpublishVolume", [{ code: "Internal", message: "backend down", times: 2, volumeId: "vol-sticky" }]);
    await admin.delete(paths.volumeAttachment("sticky"));
    const failing = await waitForVa("sticky", (va) => va?.status?.detachError !== undefined);
    expect({ finalizers: failing?.metadata.finalizers, attached: failing?.status?.attached, message: failing?.status?.detachError?.message }).toEqual({
      finalizers: [setup.finalizer],
      attached: true,
      message: "rpc error: code = Internal desc = backend down",
    });
    await waitForVa("sticky", (va) => va === null);
    expect((await callsFor("ControllerUnpublishVolume", "vol-sticky")).map((call) => call.code)).toEqual(["Internal", "Internal", "OK"]);
  });
});

describe("what a publish request carries", () => {
  it("builds the request from the PV: handle, attributes, mount capability with --default-fstype, access mode, readonly off without PUBLISH_READONLY", async () => {
    await createVolumeAttachment("request", {
      accessModes: ["ReadWriteOnce"],
      mountOptions: ["noatime"],
      volumeAttributes: { tier: "gold" },
    });
    await waitForVa("request", (va) => va?.status?.attached === true);
    const [call] = await callsFor("ControllerPublishVolume", "vol-request");
    expect(call?.request).toEqual({
      volumeId: "vol-request",
      nodeId: `${node}-id`,
      volumeCapability: { mount: { fsType: "ext4", mountFlags: ["noatime"] }, accessMode: { mode: "SINGLE_NODE_WRITER" } },
      volumeContext: { tier: "gold" },
    });
  });

  it("sends a Block capability for a block-mode PV", async () => {
    await createVolumeAttachment("block", { volumeMode: "Block", accessModes: ["ReadWriteMany"] });
    await waitForVa("block", (va) => va?.status?.attached === true);
    const [call] = await callsFor("ControllerPublishVolume", "vol-block");
    expect((call?.request as { volumeCapability?: unknown }).volumeCapability).toEqual({ block: {}, accessMode: { mode: "MULTI_NODE_MULTI_WRITER" } });
  });

  it("passes controllerPublishSecretRef's data to publish and unpublish, and never logs it", async () => {
    const secretValue = "s3cr3t-Value-that-must-not-leak";
    await admin.create(paths.secrets("default"), {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "publish-secret", namespace: "default" },
      data: { password: Buffer.from(secretValue).toString("base64") },
    });
    await createVolumeAttachment("secret", { controllerPublishSecretRef: { name: "publish-secret", namespace: "default" } });
    await waitForVa("secret", (va) => va?.status?.attached === true);
    await admin.delete(paths.volumeAttachment("secret"));
    await waitForVa("secret", (va) => va === null);
    const sent = [...(await callsFor("ControllerPublishVolume", "vol-secret")), ...(await callsFor("ControllerUnpublishVolume", "vol-secret"))];
    expect(sent.map((call) => (call.request as { secrets?: unknown }).secrets)).toEqual([{ password: secretValue }, { password: secretValue }]);
    expect(setup.attacher.log()).not.toContain(secretValue);
  });

  it("names a Secret it cannot read, and nothing of its content", async () => {
    await createVolumeAttachment("nosecret", { controllerPublishSecretRef: { name: "absent", namespace: "default" } });
    const failed = await waitForVa("nosecret", hasSettledAttachError);
    expect(failed?.status?.attachError?.message).toBe('failed to load secret "default/absent": secrets "absent" not found');
    expect(failed?.metadata.finalizers).toBeUndefined();
  });
});

describe("VAs that cannot be attached", () => {
  it("refuses a PV that is marked for deletion, without calling the driver", async () => {
    await admin.create(paths.persistentVolumes, {
      ...persistentVolume("pv-doomed", { driver: setup.driverName, volumeHandle: "vol-doomed" }),
      metadata: { name: "pv-doomed", finalizers: ["test.example/hold"] },
    });
    await admin.delete(paths.persistentVolume("pv-doomed"));
    await admin.create(paths.volumeAttachments, volumeAttachment("doomed", setup.driverName, node, "pv-doomed"));
    const failed = await waitForVa("doomed", hasSettledAttachError);
    expect(failed?.status?.attachError?.message).toBe('PersistentVolume "pv-doomed" is marked for deletion');
    expect(await callsFor("ControllerPublishVolume", "vol-doomed")).toEqual([]);
  });

  it("reports a missing PV and a missing CSINode in the API machinery's words", async () => {
    await admin.create(paths.volumeAttachments, volumeAttachment("no-pv", setup.driverName, node, "pv-absent"));
    await admin.create(paths.persistentVolumes, persistentVolume("pv-no-node", { driver: setup.driverName, volumeHandle: "vol-no-node" }));
    await admin.create(paths.volumeAttachments, volumeAttachment("no-node", setup.driverName, "node-absent", "pv-no-node"));
    const noPv = await waitForVa("no-pv", (va) => va?.status?.attachError !== undefined);
    // hasSettledAttachError passes over a CSINode's NotFound as cache lag; here it is the outcome, so it ends the wait too.
    const noNodeMessage = 'csinode.storage.k8s.io "node-absent" not found';
    const noNode = await waitForVa("no-node", (va) => hasSettledAttachError(va) || va?.status?.attachError?.message === noNodeMessage);
    expect([noPv?.status?.attachError?.message, noNode?.status?.attachError?.message]).toEqual(['persistentvolume "pv-absent" not found', noNodeMessage]);
    // Neither got our finalizer: nothing was published, so nothing blocks their deletion.
    expect([noPv?.metadata.finalizers, noNode?.metadata.finalizers]).toEqual([undefined, undefined]);
  });

  it("leaves VAs of other attachers alone", async () => {
    await admin.create(paths.volumeAttachments, volumeAttachment("foreign", "other.csi.example", node, "pv-request"));
    await createVolumeAttachment("after-foreign");
    await waitForVa("after-foreign", (va) => va?.status?.attached === true);
    await setup.attacher.waitForLog(/"Skipping VolumeAttachment for attacher" va="foreign"/);
    const foreign = await admin.get<VolumeAttachmentJson>(paths.volumeAttachment("foreign"));
    // The API server defaults `attached: false`; nobody else wrote anything.
    expect({ status: foreign.status, finalizers: foreign.metadata.finalizers, annotations: foreign.metadata.annotations }).toEqual({
      status: { attached: false },
      finalizers: undefined,
      annotations: undefined,
    });
  });
});
