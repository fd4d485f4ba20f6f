import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { AdminClient } from "../ground/admin-client";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { startFakeDriverSetup, stopFakeDriverSetup, type FakeDriverSetup } from "./support/fake-driver-ground";
import { paths, persistentVolume, volumeAttachment, type VolumeAttachmentJson } from "../ground/objects";

/**
 * Attaches and detaches share the workers but not one line: a new attach
 * goes to a worker that detaches may not take, however many slow detaches
 * wait (upstream serves one FIFO, kubernetes-csi/external-attacher#761, and
 * a new attach waits for the whole backlog), and the detaches keep every
 * other worker.
 */
let cluster: TestCluster;
let admin: AdminClient;
let setup: FakeDriverSetup;
const node = "fair-node";
const backlog = 40;
const workers = 4;

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  // --timeout far above the test's length: a held unpublish must stay held, not time out and free its worker.
  setup = await startFakeDriverSetup(cluster, admin, { driverName: "fair.fake.csi.test", nodes: [node], attacherArgs: [`--worker-threads=${workers}`, "--timeout=10m"] });
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
  it("attach a new VA while every detach of a backlog is held at the driver: detaches hold at most workers - 1 workers, and all finish once released", async () => {
    const old = Array.from({ length: backlog }, (_, i) => `fair-old-${i}`);
    for (const name of old) await attach(name);
    for (const name of old) await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment(name), (va) => va?.status?.attached === true);

    // Every ControllerUnpublish is held until released: the slowest driver there is.
    await setup.driver.control.script("ControllerUnpublishVolume", [{ hang: true, always: true }]);
    for (const name of old) await admin.delete(paths.volumeAttachment(name));
    await setup.driver.control.waitForHung("ControllerUnpublishVolume", workers - 1);
    await attach("fair-new");
    // With one FIFO, or detaches allowed every worker, this never happens while the unpublishes are held.
    await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("fair-new"), (va) => va?.status?.attached === true, 60_000);

    const publishes = (await setup.driver.control.calls("ControllerPublishVolume")).filter((call) => call.request["volumeId"] === "vol-fair-new");
    const unpublishes = await setup.driver.control.calls("ControllerUnpublishVolume");
    expect({
      publishCodes: publishes.map((call) => call.code),
      unpublishesStarted: unpublishes.length,
      unpublishesFinished: unpublishes.filter((call) => call.finishedAt !== null).length,
    }).toEqual({ publishCodes: ["OK"], unpublishesStarted: workers - 1, unpublishesFinished: 0 });

    await setup.driver.control.script("ControllerUnpublishVolume", []);
    await setup.driver.control.release("ControllerUnpublishVolume");
    for (const name of old) await admin.waitFor(paths.volumeAttachment(name), (va) => va === null, 60_000);
    const finished = (await setup.driver.control.calls("ControllerUnpublishVolume")).filter((call) => call.code === "OK");
    expect(new Set(finished.map((call) => call.request["volumeId"])).size).toBe(backlog);
  });
});
