import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { AdminClient } from "../cluster/admin-client";
import { startTestCluster, type TestCluster } from "../cluster/test-cluster";
import { startFakeDriverSetup, stopFakeDriverSetup, type FakeDriverSetup } from "./support/fake-driver-ground";
import { paths, persistentVolume, volumeAttachment, type VolumeAttachmentJson } from "./support/objects";

/**
 * Attaches and detaches share the workers but not one line: a new attach
 * goes to the next free worker however many slow detaches wait (upstream
 * serves one FIFO, kubernetes-csi/external-attacher#761), and the detaches
 * keep their turn.
 */
let cluster: TestCluster;
let admin: AdminClient;
let setup: FakeDriverSetup;
const node = "fair-node";
const backlog = 16;
const unpublishMs = 1_500;

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  setup = await startFakeDriverSetup(cluster, admin, { driverName: "fair.fake.csi.test", nodes: [node], attacherArgs: ["--worker-threads=2"] });
});

afterAll(async () => {
  await stopFakeDriverSetup(setup);
  await cluster?.stop();
});

async function attach(name: string): Promise<void> {
  await admin.create(paths.persistentVolumes, persistentVolume(`pv-${name}`, { driver: setup.driverName, volumeHandle: `vol-${name}` }));
  await admin.create(paths.volumeAttachments, volumeAttachment(name, setup.driverName, node, `pv-${name}`));
}

describe("attach and detach lanes", () => {
  it("start a new attach at the next free worker slot behind a backlog of slow detaches, and still finish every detach", async () => {
    const old = Array.from({ length: backlog }, (_, i) => `fair-old-${i}`);
    for (const name of old) await attach(name);
    for (const name of old) await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment(name), (va) => va?.status?.attached === true);

    await setup.driver.control.script("ControllerUnpublishVolume", [{ delayMs: unpublishMs, always: true }]);
    for (const name of old) await admin.delete(paths.volumeAttachment(name));
    // Both workers are now busy with detaches and the rest wait.
    await setup.driver.control.waitForCalls("ControllerUnpublishVolume", 2);
    await attach("fair-new");
    await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("fair-new"), (va) => va?.status?.attached === true, 60_000);

    const [publish] = (await setup.driver.control.calls("ControllerPublishVolume")).filter((call) => call.request["volumeId"] === "vol-fair-new");
    const unpublishes = await setup.driver.control.calls("ControllerUnpublishVolume");
    const startedBefore = unpublishes.filter((call) => publish !== undefined && call.startedAt < publish.startedAt).length;
    // One FIFO would start all 16 detaches first. With lanes: the 2 in flight
    // when the VA arrived, at most one more per worker while its watch event
    // travels, then the attach. The bound leaves room for a slow machine.
    expect({ published: publish !== undefined, detachesStartedFirstAtMost6: startedBefore <= 6 }).toEqual({ published: true, detachesStartedFirstAtMost6: true });

    for (const name of old) await admin.waitFor(paths.volumeAttachment(name), (va) => va === null, 60_000);
    const finished = (await setup.driver.control.calls("ControllerUnpublishVolume")).filter((call) => call.code === "OK");
    expect(new Set(finished.map((call) => call.request["volumeId"])).size).toBe(backlog);
  });
});
