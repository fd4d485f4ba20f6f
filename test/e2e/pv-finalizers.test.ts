import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { AdminClient } from "../ground/admin-client";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { startFakeDriverSetup, stopFakeDriverSetup, type FakeDriverSetup } from "./support/fake-driver-ground";
import { paths, persistentVolume, type PersistentVolumeJson, type VolumeAttachmentJson } from "../ground/objects";
import { rawPersistentVolume, ruleVolumeAttachment } from "./support/rule-objects";

/**
 * The PV finalizer rules of the spec (§ Attach step 1, § PV sync, § Events
 * that enqueue work) against kube-apiserver: the finalizer lists the server
 * holds after each of the attacher's JSON patches.
 *
 * One worker: the PV queue is then processed in the order of the watch
 * events, so "a PV queued after X is done" means "X was decided", which is
 * how a test sees that the attacher left a finalizer alone.
 */
let cluster: TestCluster;
let admin: AdminClient;
let setup: FakeDriverSetup;
const nodes = ["pv-node-a", "pv-node-b"] as const;
const protection = "kubernetes.io/pv-protection";
const migratedTo = "pv.kubernetes.io/migrated-to";

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  setup = await startFakeDriverSetup(cluster, admin, {
    driverName: "pv.fake.csi.test",
    nodes,
    attacherArgs: ["--worker-threads=1", "--retry-interval-start=100ms", "--retry-interval-max=1s"],
  });
});

afterAll(async () => {
  await stopFakeDriverSetup(setup);
  await cluster?.stop();
});

function waitForPv(name: string, predicate: (pv: PersistentVolumeJson | null) => boolean): Promise<PersistentVolumeJson | null> {
  return admin.waitFor<PersistentVolumeJson>(paths.persistentVolume(name), predicate, 30_000);
}

async function attachVa(name: string, pv: string, node: string = nodes[0]): Promise<void> {
  await admin.create(paths.volumeAttachments, ruleVolumeAttachment(name, { attacher: setup.driverName, node, pv }));
  await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment(name), (va) => va?.status?.attached === true, 30_000);
}

async function deleteVa(name: string): Promise<void> {
  await admin.delete(paths.volumeAttachment(name));
  await admin.waitFor(paths.volumeAttachment(name), (va) => va === null, 30_000);
}

/** Lets a deleted PV go: the apiserver's pv-protection has no controller here to remove it. */
async function releaseProtection(name: string): Promise<void> {
  const pv = await admin.get<PersistentVolumeJson>(paths.persistentVolume(name));
  const index = pv.metadata.finalizers?.indexOf(protection) ?? -1;
  if (index < 0) return;
  await admin.patch(paths.persistentVolume(name), [{ op: "remove", path: `/metadata/finalizers/${index}` }], "json");
}

describe("adding the PV finalizer", () => {
  it("creates the finalizer list of a PV that has none", async () => {
    await admin.create(paths.persistentVolumes, persistentVolume("pv-bare", { driver: setup.driverName, volumeHandle: "vol-bare" }));
    await releaseProtection("pv-bare");
    await attachVa("bare", "pv-bare");
    expect((await admin.get<PersistentVolumeJson>(paths.persistentVolume("pv-bare"))).metadata.finalizers).toEqual([setup.finalizer]);
  });

  it("appends to an existing list, keeping every other controller's finalizer", async () => {
    await admin.create(paths.persistentVolumes, persistentVolume("pv-shared", { driver: setup.driverName, volumeHandle: "vol-shared" }));
    await attachVa("shared", "pv-shared");
    expect((await admin.get<PersistentVolumeJson>(paths.persistentVolume("pv-shared"))).metadata.finalizers).toEqual([protection, setup.finalizer]);
  });
});

describe("removing the PV finalizer", () => {
  it("keeps it on a deleted PV while any VA names it, and removes exactly ours once the last one is gone", async () => {
    await admin.create(paths.persistentVolumes, persistentVolume("pv-two", { driver: setup.driverName, volumeHandle: "vol-two" }));
    await attachVa("two-a", "pv-two", nodes[0]);
    await attachVa("two-b", "pv-two", nodes[1]);
    await admin.delete(paths.persistentVolume("pv-two"));
    await deleteVa("two-a");
    await setup.attacher.waitForLog(/"PersistentVolume still used by a VolumeAttachment" pv="pv-two" va="two-b"/);
    const whileUsed = await admin.get<PersistentVolumeJson>(paths.persistentVolume("pv-two"));
    await deleteVa("two-b");
    const released = await waitForPv("pv-two", (pv) => !pv?.metadata.finalizers?.includes(setup.finalizer));
    expect({ whileUsed: whileUsed.metadata.finalizers, released: released?.metadata.finalizers }).toEqual({
      whileUsed: [protection, setup.finalizer],
      released: [protection],
    });
    await releaseProtection("pv-two");
    await waitForPv("pv-two", (pv) => pv === null);
  });

  it("hands a live in-tree PV back when CSI migration was rolled back, unless migrated-to names this driver or a VA still uses it", async () => {
    const inTree = { gcePersistentDisk: { pdName: "disk-1" } };
    const finalizers = [protection, setup.finalizer];
    // The user VA must be in the attacher's cache before its PV's event: the
    // attacher reads it (and skips it, it is another attacher's) first.
    await admin.create(paths.volumeAttachments, ruleVolumeAttachment("user", { attacher: "someone.else.csi", node: nodes[0], pv: "pv-used" }));
    await setup.attacher.waitForLog(/"Skipping VolumeAttachment for attacher" va="user"/);
    // Created in this order; with one worker each PV is decided before the next.
    await admin.create(paths.persistentVolumes, rawPersistentVolume("pv-ours", inTree, { finalizers, annotations: { [migratedTo]: setup.driverName } }));
    await admin.create(paths.persistentVolumes, rawPersistentVolume("pv-used", inTree, { finalizers }));
    await admin.create(paths.persistentVolumes, rawPersistentVolume("pv-rolled-back", inTree, { finalizers, annotations: { [migratedTo]: "pd.csi.storage.gke.io" } }));
    const rolledBack = await waitForPv("pv-rolled-back", (pv) => !pv?.metadata.finalizers?.includes(setup.finalizer));
    await setup.attacher.waitForLog(/"PersistentVolume still used by a VolumeAttachment" pv="pv-used" va="user"/);
    const ours = await admin.get<PersistentVolumeJson>(paths.persistentVolume("pv-ours"));
    const used = await admin.get<PersistentVolumeJson>(paths.persistentVolume("pv-used"));
    expect({ rolledBack: rolledBack?.metadata.finalizers, ours: ours.metadata.finalizers, used: used.metadata.finalizers }).toEqual({
      rolledBack: [protection],
      ours: [protection, setup.finalizer],
      used: [protection, setup.finalizer],
    });
  });
});
