import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { AdminClient, type KubeObject } from "../cluster/admin-client";
import { waitForCondition } from "../cluster/managed-process";
import type { DriverConfigPatch } from "../drivers/fake-csi-driver/config";
import { startTestCluster, type TestCluster } from "../cluster/test-cluster";
import { startAttacher, type AttacherProcess } from "./support/attacher-process";
import { hardDeleteFromEtcd } from "./support/etcd-hard-delete";
import { startFakeDriverSetup, stopFakeDriverSetup, type FakeDriverSetup } from "./support/fake-driver-ground";
import { csiNode, paths, persistentVolume, type PersistentVolumeJson, type VolumeAttachmentJson } from "./support/objects";
import { deletePvAsReclaimWould, pvProtection } from "./support/pv-deletion";
import { callsFor, nodeIdAnnotation, ruleVolumeAttachment } from "./support/rule-objects";

/**
 * A publish whose VA kube-apiserver deleted while it still carried our
 * finalizer (kubernetes#77988) while no attacher watched: the VA is deleted
 * straight from etcd while the attacher is down (SIGKILL), then the next one
 * starts, as a new Lease holder would (the same runAttacher: first lists,
 * then the workers and the reconciler's first pass). One branch per driver
 * kind: the reliability doc's "A VolumeAttachment that vanished" states the
 * rule. A VA that vanishes while its attacher runs is released by that
 * attacher with either kind (the blind branch's second test).
 */
let cluster: TestCluster;
let admin: AdminClient;
/** A driver that cannot list where volumes are published. */
let blind: Attached;
/** A driver with LIST_VOLUMES and LIST_VOLUMES_PUBLISHED_NODES (the reconciler runs, once a minute: only its first pass counts here). */
let listing: Attached;
const nodes = ["recovery-node-a", "recovery-node-b"] as const;
const retries = ["--retry-interval-start=100ms", "--retry-interval-max=1s"];

/** A driver with its attacher, which the tests kill and start again. */
interface Attached {
  readonly setup: FakeDriverSetup;
  readonly args: readonly string[];
  attacher: AttacherProcess;
  restarts: number;
}

async function attachedDriver(driverName: string, args: readonly string[], controllerCapabilities?: DriverConfigPatch["controllerCapabilities"]): Promise<Attached> {
  const setup = await startFakeDriverSetup(cluster, admin, {
    driverName,
    nodes,
    attacherArgs: args,
    ...(controllerCapabilities ? { config: { controllerCapabilities } } : {}),
  });
  return { setup, args, attacher: setup.attacher, restarts: 0 };
}

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  blind = await attachedDriver("recover.fake.csi.test", [...retries, "--timeout=30s"]);
  listing = await attachedDriver("recover-list.fake.csi.test", [...retries, "--timeout=30s", "--reconcile-sync=1m"], [
    "PUBLISH_UNPUBLISH_VOLUME",
    "LIST_VOLUMES",
    "LIST_VOLUMES_PUBLISHED_NODES",
  ]);
});

afterAll(async () => {
  for (const driver of [blind, listing]) {
    if (driver === undefined) continue;
    await driver.attacher[Symbol.asyncDispose]();
    await stopFakeDriverSetup(driver.setup);
  }
  await cluster?.stop();
});

function waitForVa(name: string, predicate: (va: VolumeAttachmentJson | null) => boolean): Promise<VolumeAttachmentJson | null> {
  return admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment(name), predicate, 30_000);
}

function waitForPv(name: string, predicate: (pv: PersistentVolumeJson | null) => boolean): Promise<PersistentVolumeJson | null> {
  return admin.waitFor<PersistentVolumeJson>(paths.persistentVolume(name), predicate, 30_000);
}

/** Creates `pv-<name>` and the VA `name` on `node`, and waits until the attacher attached it. */
async function attach(driver: Attached, name: string, node: string = nodes[0]): Promise<void> {
  const { driverName } = driver.setup;
  await admin.create(paths.persistentVolumes, persistentVolume(`pv-${name}`, { driver: driverName, volumeHandle: `vol-${name}` }));
  await admin.create(paths.volumeAttachments, ruleVolumeAttachment(name, { attacher: driverName, node, pv: `pv-${name}` }));
  await waitForVa(name, (va) => va?.status?.attached === true);
}

/** Kills the attacher (the leader dies), runs `meanwhile` while none runs, then starts the next one and waits for its caches. */
async function whileNoAttacherRuns(driver: Attached, meanwhile: () => Promise<void>): Promise<void> {
  driver.attacher.process.killNow();
  await waitForCondition(() => !driver.attacher.process.running, { description: "the attacher to die", timeoutMs: 10_000 });
  await meanwhile();
  driver.restarts += 1;
  driver.attacher = await startAttacher({
    kubeconfig: cluster.kubeconfigPath,
    csiAddress: driver.setup.driver.csiSocket,
    logDir: driver.setup.dir,
    args: driver.args,
    name: `attacher-${driver.setup.driverName}-${driver.restarts}`,
  });
}

function deletePv(name: string): Promise<void> {
  return deletePvAsReclaimWould(admin, name);
}

async function unpublishes(driver: Attached, name: string): Promise<{ code: string | null; nodeId: unknown }[]> {
  return (await callsFor(driver.setup.driver, "ControllerUnpublishVolume", `vol-${name}`)).map((call) => ({ code: call.code, nodeId: call.request["nodeId"] }));
}

describe("a driver that cannot list where volumes are published", () => {
  it("recovers nothing across a restart, as upstream: a VA that vanished while no attacher ran leaves its volume published, and our finalizer leaves its deleted PV with no unpublish", async () => {
    await attach(blind, "blind-swept");
    await whileNoAttacherRuns(blind, async () => {
      await hardDeleteFromEtcd(cluster, "/registry/volumeattachments/blind-swept");
      await deletePv("pv-blind-swept");
    });
    const released = await waitForPv("pv-blind-swept", (pv) => pv === null);
    expect({ released, unpublishes: await unpublishes(blind, "blind-swept"), published: (await blind.setup.driver.control.published())["vol-blind-swept"] ?? [] }).toEqual({
      released: null,
      // Nothing the API keeps tells this PV from any detached one: the documented unprotected case.
      unpublishes: [],
      published: [`${nodes[0]}-id`],
    });
  });

  it("keeps the finalizer of a PV whose vanished VA's node cannot be told, with a Warning event and an error line saying what to check, until the node is known again", async () => {
    const gone = "recovery-node-gone";
    const finalizer = blind.setup.finalizer;
    await admin.create(paths.csiNodes, csiNode(gone, [{ name: blind.setup.driverName, nodeID: `${gone}-id` }]));
    await attach(blind, "blind-unknown", gone);
    // Neither the annotation nor the CSINode will tell the node ID.
    await admin.patch(paths.volumeAttachment("blind-unknown"), { metadata: { annotations: { [nodeIdAnnotation]: null } } });
    await admin.delete(paths.csiNode(gone));
    await waitForCsiNodeGone(blind, gone);
    await hardDeleteFromEtcd(cluster, "/registry/volumeattachments/blind-unknown");
    await deletePv("pv-blind-unknown");
    const events = await waitForEvents("pv-blind-unknown");
    await blind.attacher.waitForLog(/^E.*"Volume may still be published to a node that cannot be known; keeping our finalizer on its PersistentVolume" pv="pv-blind-unknown" volume="vol-blind-unknown"/m);
    const kept = await admin.get<PersistentVolumeJson>(paths.persistentVolume("pv-blind-unknown"));
    expect({ finalizers: kept.metadata.finalizers, events, unpublishes: await unpublishes(blind, "blind-unknown") }).toEqual({
      finalizers: [finalizer],
      events: [
        {
          type: "Warning",
          reason: "UnpublishNodeUnknown",
          message: `VolumeAttachment blind-unknown vanished and its node ID cannot be told: csinode.storage.k8s.io "${gone}" not found; check on the storage backend that volume vol-blind-unknown is published to no node that no VolumeAttachment names, then remove finalizer ${finalizer} from PersistentVolume pv-blind-unknown`,
        },
      ],
      unpublishes: [],
    });
    // The node registers again: the retry unpublishes and the PV goes.
    await admin.create(paths.csiNodes, csiNode(gone, [{ name: blind.setup.driverName, nodeID: `${gone}-id` }]));
    await waitForPv("pv-blind-unknown", (pv) => pv === null);
    expect(await unpublishes(blind, "blind-unknown")).toEqual([{ code: "OK", nodeId: `${gone}-id` }]);
  });
});

describe("a driver that lists where volumes are published", () => {
  it("on the next leader's first pass unpublishes what no VA of ours names: a live PV keeps our finalizer, a deleted one loses it after, a volume no PV of ours names stays published", async () => {
    await attach(listing, "list-live");
    await attach(listing, "list-deleted", nodes[1]);
    await whileNoAttacherRuns(listing, async () => {
      await hardDeleteFromEtcd(cluster, "/registry/volumeattachments/list-live");
      await hardDeleteFromEtcd(cluster, "/registry/volumeattachments/list-deleted");
      await deletePv("pv-list-deleted");
      // Published by someone else: no VA and no PV of ours ever named it (upstream's rule).
      await listing.setup.driver.control.addPublication({ volumeId: "vol-list-foreign", nodeId: `${nodes[0]}-id` });
    });
    await waitForPv("pv-list-deleted", (pv) => pv === null);
    await listing.setup.driver.control.waitFor("vol-list-live unpublished", { timeoutMs: 30_000, intervalMs: 100 }, async () => ((await unpublishes(listing, "list-live")).length > 0 ? true : undefined));
    const live = await admin.get<PersistentVolumeJson>(paths.persistentVolume("pv-list-live"));
    const published = await listing.setup.driver.control.published();
    expect({
      liveFinalizers: live.metadata.finalizers,
      unpublishedLive: await unpublishes(listing, "list-live"),
      unpublishedDeleted: await unpublishes(listing, "list-deleted"),
      published: { live: published["vol-list-live"] ?? [], deleted: published["vol-list-deleted"] ?? [], foreign: published["vol-list-foreign"] ?? [] },
    }).toEqual({
      liveFinalizers: [pvProtection, listing.setup.finalizer],
      // Only the node the listing showed, not every registered one.
      unpublishedLive: [{ code: "OK", nodeId: `${nodes[0]}-id` }],
      unpublishedDeleted: [{ code: "OK", nodeId: `${nodes[1]}-id` }],
      published: { live: [], deleted: [], foreign: [`${nodes[0]}-id`] },
    });
  });

  it("lets a VA that appears for the same volume and node while the recovery unpublishes it end attached and published: the publish waits for the unpublish", async () => {
    const { control } = listing.setup.driver;
    await attach(listing, "list-race");
    await control.script("ControllerUnpublishVolume", [{ hang: true, times: 1, volumeId: "vol-list-race" }]);
    await whileNoAttacherRuns(listing, () => hardDeleteFromEtcd(cluster, "/registry/volumeattachments/list-race"));
    await control.waitForHung("ControllerUnpublishVolume", 1, { timeoutMs: 30_000 });
    // The A/D controller asks again for the same volume on the same node.
    await admin.create(paths.volumeAttachments, ruleVolumeAttachment("list-race-again", { attacher: listing.setup.driverName, node: nodes[0], pv: "pv-list-race" }));
    await listing.attacher.waitForLog(/"Attaching" va="list-race-again"/);
    await control.release("ControllerUnpublishVolume");
    await waitForVa("list-race-again", (va) => va?.status?.attached === true);
    const [unpublish] = await callsFor(listing.setup.driver, "ControllerUnpublishVolume", "vol-list-race");
    const publishes = await callsFor(listing.setup.driver, "ControllerPublishVolume", "vol-list-race");
    const again = publishes.at(-1);
    expect({
      published: (await control.published())["vol-list-race"] ?? [],
      unpublish: unpublish?.code,
      publishes: publishes.length,
      publishedAfterUnpublish: again !== undefined && unpublish?.finishedAt !== null && unpublish !== undefined && Date.parse(again.startedAt) >= Date.parse(unpublish.finishedAt ?? ""),
    }).toEqual({ published: [`${nodes[0]}-id`], unpublish: "OK", publishes: 2, publishedAfterUnpublish: true });
  });
});

interface EventJson extends KubeObject {
  readonly type: string;
  readonly reason: string;
  readonly message: string;
}

/** Waits for the Warning events about PV `name` (core/v1, in "default": the PV is cluster-scoped). */
async function waitForEvents(name: string): Promise<{ type: string; reason: string; message: string }[]> {
  let events: EventJson[] = [];
  await waitForCondition(
    async () => {
      events = (await admin.list<EventJson>("/api/v1/namespaces/default/events", { fieldSelector: `involvedObject.kind=PersistentVolume,involvedObject.name=${name}` })).items;
      return events.length > 0;
    },
    { description: `events about PersistentVolume ${name}`, timeoutMs: 30_000, intervalMs: 200 },
  );
  return events.map(({ type, reason, message }) => ({ type, reason, message }));
}

/**
 * Waits until the attacher's CSINode cache no longer has `node`: a probe VA
 * on that node fails to attach with the CSINode's NotFound only once it does.
 */
async function waitForCsiNodeGone(driver: Attached, node: string): Promise<void> {
  const probe = `probe-${node}`;
  await admin.create(paths.persistentVolumes, persistentVolume(`pv-${probe}`, { driver: driver.setup.driverName, volumeHandle: `vol-${probe}` }));
  await admin.create(paths.volumeAttachments, ruleVolumeAttachment(probe, { attacher: driver.setup.driverName, node, pv: `pv-${probe}` }));
  await waitForVa(probe, (va) => va?.status?.attachError?.message === `csinode.storage.k8s.io "${node}" not found`);
  await admin.delete(paths.volumeAttachment(probe));
}
