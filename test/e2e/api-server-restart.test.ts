import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { AdminClient } from "../ground/admin-client";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { startFakeDriverSetup, stopFakeDriverSetup, type FakeDriverSetup } from "./support/fake-driver-ground";
import { paths, persistentVolume, volumeAttachment, type VolumeAttachmentJson } from "../ground/objects";

/**
 * The attacher outlives its API server: while kube-apiserver is down it
 * backs off, and when it returns with the attacher's resourceVersion
 * compacted away (410 Gone), it relists and carries on.
 */
let cluster: TestCluster;
let admin: AdminClient;
let setup: FakeDriverSetup;
const node = "restart-node";

beforeAll(async () => {
  // Without the watch cache, watches are served by etcd itself, so a
  // compaction in etcd deterministically expires the attacher's resourceVersion.
  cluster = await startTestCluster({ extraApiserverArgs: ["--watch-cache=false"] });
  admin = new AdminClient(cluster);
  setup = await startFakeDriverSetup(cluster, admin, { driverName: "restart.fake.csi.test", nodes: [node] });
});

afterAll(async () => {
  await stopFakeDriverSetup(setup);
  await cluster?.stop();
});

async function createVolumeAttachment(name: string): Promise<void> {
  await admin.create(paths.persistentVolumes, persistentVolume(`pv-${name}`, { driver: setup.driverName, volumeHandle: `vol-${name}` }));
  await admin.create(paths.volumeAttachments, volumeAttachment(name, setup.driverName, node, `pv-${name}`));
}

describe("API server restarts", () => {
  it("backs off while kube-apiserver is down, relists after 410 Gone, and keeps attaching and detaching", async () => {
    await createVolumeAttachment("before");
    await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("before"), (va) => va?.status?.attached === true);

    await cluster.restartApiserver(async () => {
      await setup.attacher.waitForLog(/"List\/watch failed, backing off"/);
      await cluster.compactEtcd();
    });
    await setup.attacher.waitForLog(/"Watch expired, relisting"/, 60_000);

    await createVolumeAttachment("after");
    await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("after"), (va) => va?.status?.attached === true);
    await admin.delete(paths.volumeAttachment("before"));
    await admin.waitFor(paths.volumeAttachment("before"), (va) => va === null);
    expect(await setup.driver.control.published()).toEqual({ "vol-before": [], "vol-after": [`${node}-id`] });
    expect(setup.attacher.process.running).toBe(true);
  });
});
