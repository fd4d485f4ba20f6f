import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { AdminClient } from "../ground/admin-client";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import type { CallRecord } from "../ground/fake-csi-driver/control-protocol";
import { startFakeDriverSetup, stopFakeDriverSetup, type FakeDriverSetup } from "./support/fake-driver-ground";
import { paths, persistentVolume, volumeAttachment, type VolumeAttachmentJson } from "../ground/objects";

/**
 * The reconciler leaves in-flight work alone: with a backlog of VAs waiting
 * when the attacher starts, the default client-side API limits (5 qps, burst
 * 10) and reconcile passes every second, each pass meets VAs whose volume is
 * published while their `attached: true` write still waits in the rate
 * limiter. Those are their workers' business; forcing them would publish
 * every volume twice. Real drift after the backlog is still repaired, in
 * both directions, within a period.
 */
let cluster: TestCluster;
let admin: AdminClient;
let setup: FakeDriverSetup;
const driverName = "in-flight.fake.csi.test";
const node = "in-flight-node";
const nodeId = `${node}-id`;
const backlog = 30;
const names = Array.from({ length: backlog }, (_, i) => `backlog-${i}`);
const volumeOf = (name: string) => `vol-${name}`;
// Someone else's finalizer keeps a VA visible after the attacher let go of it.
const holdFinalizer = "test.example/hold";
// Drift must be repaired within one period (1s); the bound leaves room for a loaded machine.
const repairBoundMs = 15_000;

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  // The backlog is waiting before the attacher starts: its first reconcile
  // pass runs right after the caches sync, with every VA still queued.
  for (const name of names) {
    await admin.create(paths.persistentVolumes, persistentVolume(`pv-${name}`, { driver: driverName, volumeHandle: volumeOf(name) }));
    await admin.create(paths.volumeAttachments, volumeAttachment(name, driverName, node, `pv-${name}`));
  }
  setup = await startFakeDriverSetup(cluster, admin, {
    driverName,
    config: { controllerCapabilities: ["PUBLISH_UNPUBLISH_VOLUME", "LIST_VOLUMES", "LIST_VOLUMES_PUBLISHED_NODES"] },
    nodes: [node],
    // The defaults, spelled out: the test harness otherwise lifts them.
    attacherArgs: ["--kube-api-qps=5", "--kube-api-burst=10", "--reconcile-sync=1s", "--timeout=5s"],
  });
});

afterAll(async () => {
  await stopFakeDriverSetup(setup);
  await cluster?.stop();
});

/** callCounts counts the calls of `method` per volume, over the volumes of `volumes`. */
async function callCounts(method: "ControllerPublishVolume" | "ControllerUnpublishVolume", volumes: readonly string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = Object.fromEntries(volumes.map((volume) => [volume, 0]));
  for (const call of await setup.driver.control.calls(method)) {
    const volume = (call.request as { volumeId?: string }).volumeId;
    if (volume !== undefined && volume in counts) counts[volume] = (counts[volume] ?? 0) + 1;
  }
  return counts;
}

/** waitForListings waits until the driver has answered `count` more ListVolumes calls than `after` holds: whole reconcile passes. */
async function waitForListings(after: readonly CallRecord[], count: number): Promise<void> {
  await setup.driver.control.waitForCalls("ListVolumes", after.length + count, { finished: true, timeoutMs: repairBoundMs, intervalMs: 100 });
}

/** waitForPublished waits until the driver has `volumeId` published to exactly `nodeIds`. */
function waitForPublished(volumeId: string, nodeIds: readonly string[]): Promise<Record<string, string[]>> {
  return setup.driver.control.waitFor(`${volumeId} published to [${nodeIds.join(", ")}]`, { timeoutMs: repairBoundMs, intervalMs: 100 }, async () => {
    const published = await setup.driver.control.published();
    return JSON.stringify(published[volumeId] ?? []) === JSON.stringify(nodeIds) ? published : undefined;
  });
}

const driftLine = /"VolumeAttachment attached status and actual state do not match[^"]*" VolumeAttachment="([^"]+)"/g;

/** driftReported lists the VAs the attacher's log reports drift for, in order. */
function driftReported(): string[] {
  return [...setup.attacher.log().matchAll(driftLine)].map((match) => match[1] ?? "");
}

describe("the reconciler leaves in-flight work alone", () => {
  it("publishes each of a backlog of volumes exactly once while passes run every second at the default API limits", async () => {
    for (const name of names) {
      await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment(name), (va) => va?.status?.attached === true, 120_000);
    }
    // Two whole passes after the last attach: a pass that met a VA in flight
    // has had its forced syncs run by then.
    await waitForListings(await setup.driver.control.calls("ListVolumes"), 2);
    const publishes = await callCounts("ControllerPublishVolume", names.map(volumeOf));
    const total = Object.values(publishes).reduce((sum, count) => sum + count, 0);
    expect({ total, publishes, driftReported: driftReported() }).toEqual({
      total: backlog,
      publishes: Object.fromEntries(names.map((name) => [volumeOf(name), 1])),
      driftReported: [],
    });
  });

  it("publishes again, within a period, a volume the driver detached behind the attacher's back after the backlog", async () => {
    const name = "backlog-0";
    await setup.driver.control.forgetPublication({ volumeId: volumeOf(name), nodeId });
    await waitForPublished(volumeOf(name), [nodeId]);
    const va = await admin.get<VolumeAttachmentJson>(paths.volumeAttachment(name));
    expect({ publishes: await callCounts("ControllerPublishVolume", [volumeOf(name)]), driftReported: driftReported(), attached: va.status?.attached }).toEqual({
      publishes: { [volumeOf(name)]: 2 },
      driftReported: [name],
      attached: true,
    });
  });

  it("unpublishes, within a period, a volume published again under a VA being deleted whose status says detached", async () => {
    const name = "backlog-1";
    await admin.patch(paths.volumeAttachment(name), { metadata: { finalizers: [setup.finalizer, holdFinalizer] } });
    await admin.delete(paths.volumeAttachment(name));
    const detached = await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment(name), (va) => va?.status?.attached === false && va.metadata.finalizers?.length === 1, 30_000);
    expect(detached?.metadata.finalizers).toEqual([holdFinalizer]);
    await setup.driver.control.addPublication({ volumeId: volumeOf(name), nodeId });

    await waitForPublished(volumeOf(name), []);
    expect({ unpublishes: await callCounts("ControllerUnpublishVolume", [volumeOf(name)]), driftReported: driftReported() }).toEqual({
      unpublishes: { [volumeOf(name)]: 2 },
      driftReported: ["backlog-0", name],
    });
    await admin.patch(paths.volumeAttachment(name), { metadata: { finalizers: null } });
    await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment(name), (va) => va === null);
  });
});
