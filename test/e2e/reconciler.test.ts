import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { AdminClient } from "../cluster/admin-client";
import { startTestCluster, type TestCluster } from "../cluster/test-cluster";
import type { CallRecord } from "../drivers/fake-csi-driver/control-protocol";
import { startFakeDriverSetup, stopFakeDriverSetup, type FakeDriverSetup } from "./support/fake-driver-ground";
import { paths, persistentVolume, volumeAttachment, type VolumeAttachmentJson } from "./support/objects";

/**
 * The reconciler of the compiled attacher against a driver with
 * LIST_VOLUMES and LIST_VOLUMES_PUBLISHED_NODES: what the driver says is
 * published wins over what a VA's status says, in both directions.
 */
let cluster: TestCluster;
let admin: AdminClient;
let setup: FakeDriverSetup;
const node = "reconcile-node";
const nodeId = `${node}-id`;
const listingCapabilities = ["PUBLISH_UNPUBLISH_VOLUME", "LIST_VOLUMES", "LIST_VOLUMES_PUBLISHED_NODES"] as const;
// Someone else's finalizer keeps a VA visible after the attacher let go of it.
const holdFinalizer = "test.example/hold";

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  setup = await startFakeDriverSetup(cluster, admin, {
    driverName: "reconcile.fake.csi.test",
    config: { controllerCapabilities: [...listingCapabilities] },
    nodes: [node],
    attacherArgs: ["--reconcile-sync=1s", "--max-entries=2", "--timeout=5s", "--retry-interval-start=100ms", "--retry-interval-max=1s"],
  });
});

afterAll(async () => {
  await stopFakeDriverSetup(setup);
  await cluster?.stop();
});

async function createVolumeAttachment(name: string, finalizers?: readonly string[]): Promise<void> {
  await admin.create(paths.persistentVolumes, persistentVolume(`pv-${name}`, { driver: setup.driverName, volumeHandle: `vol-${name}` }));
  const va = volumeAttachment(name, setup.driverName, node, `pv-${name}`);
  await admin.create(paths.volumeAttachments, finalizers ? { ...va, metadata: { ...va.metadata, finalizers: [...finalizers] } } : va);
}

function waitForVa(name: string, predicate: (va: VolumeAttachmentJson | null) => boolean): Promise<VolumeAttachmentJson | null> {
  return admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment(name), predicate, 30_000);
}

/** waitForPublished waits until the driver has `volumeId` published to exactly `nodeIds`. */
function waitForPublished(volumeId: string, nodeIds: readonly string[]): Promise<Record<string, string[]>> {
  return setup.driver.control.waitFor(`${volumeId} published to [${nodeIds.join(", ")}]`, { timeoutMs: 30_000, intervalMs: 100 }, async () => {
    const published = await setup.driver.control.published();
    return JSON.stringify(published[volumeId] ?? []) === JSON.stringify(nodeIds) ? published : undefined;
  });
}

async function callsFor(method: "ControllerPublishVolume" | "ControllerUnpublishVolume", volumeId: string): Promise<CallRecord[]> {
  return (await setup.driver.control.calls(method)).filter((call) => (call.request as { volumeId?: string }).volumeId === volumeId);
}

describe("reconciler", () => {
  it("pages through ListVolumes with --max-entries, following next_token", async () => {
    for (const volumeId of ["page-0", "page-1", "page-2", "page-3", "page-4"]) {
      await setup.driver.control.addVolume({ volumeId });
    }
    // A pass that reached the third page; the two calls before it are the
    // same pass, since one attacher lists one page at a time.
    const calls = await setup.driver.control.waitFor("a ListVolumes call for the third page", { timeoutMs: 30_000, intervalMs: 100 }, async () => {
      const all = await setup.driver.control.calls("ListVolumes");
      const third = all.findIndex((call) => call.request["startingToken"] === "4");
      return third >= 2 ? all.slice(third - 2, third + 1) : undefined;
    });
    expect(calls.map((call) => ({ request: call.request, code: call.code }))).toEqual([
      { request: { maxEntries: 2 }, code: "OK" },
      { request: { maxEntries: 2, startingToken: "2" }, code: "OK" },
      { request: { maxEntries: 2, startingToken: "4" }, code: "OK" },
    ]);
  });

  it("publishes again a volume the driver detached behind the attacher's back", async () => {
    await createVolumeAttachment("lost");
    const attached = await waitForVa("lost", (va) => va?.status?.attached === true);
    await setup.driver.control.forgetPublication({ volumeId: "vol-lost", nodeId });

    await waitForPublished("vol-lost", [nodeId]);
    await setup.attacher.waitForLog(/"VolumeAttachment attached status and actual state do not match[^"]*" VolumeAttachment="lost"/);
    const publishes = await callsFor("ControllerPublishVolume", "vol-lost");
    const va = await admin.get<VolumeAttachmentJson>(paths.volumeAttachment("lost"));
    // The same request again, and the VA still says what it said: nobody but the handler wrote it.
    expect({ codes: publishes.slice(0, 2).map((call) => call.code), requests: publishes.slice(1, 2).map((call) => call.request), status: va.status }).toEqual({
      codes: ["OK", "OK"],
      requests: publishes.slice(0, 1).map((call) => call.request),
      status: attached?.status,
    });
  });

  it("unpublishes a volume the driver still has published while its VA, being deleted, says it is detached", async () => {
    await createVolumeAttachment("lingering", [holdFinalizer]);
    await waitForVa("lingering", (va) => va?.status?.attached === true);
    await admin.delete(paths.volumeAttachment("lingering"));
    const detached = await waitForVa("lingering", (va) => va?.status?.attached === false && va.metadata.finalizers?.length === 1);
    expect(detached?.metadata.finalizers).toEqual([holdFinalizer]);
    await setup.driver.control.addPublication({ volumeId: "vol-lingering", nodeId });

    await waitForPublished("vol-lingering", []);
    await setup.attacher.waitForLog(/"VolumeAttachment attached status and actual state do not match[^"]*" VolumeAttachment="lingering"/);
    const unpublishes = await callsFor("ControllerUnpublishVolume", "vol-lingering");
    expect(unpublishes.slice(0, 2).map((call) => ({ request: call.request, code: call.code }))).toEqual([
      { request: { volumeId: "vol-lingering", nodeId }, code: "OK" },
      { request: { volumeId: "vol-lingering", nodeId }, code: "OK" },
    ]);
    await admin.patch(paths.volumeAttachment("lingering"), { metadata: { finalizers: null } });
    await waitForVa("lingering", (va) => va === null);
  });

  it("completes a pass whose ListVolumes pages together outlast --timeout, since each page has its own", async () => {
    await createVolumeAttachment("slow-pages");
    await waitForVa("slow-pages", (va) => va?.status?.attached === true);
    // Seven volumes or more by now at two a page: four pages of 2 s each
    // under --timeout=5s. One deadline for the whole pass never completes it.
    await setup.driver.control.script("ListVolumes", [{ delayMs: 2_000, always: true }]);
    const listedBefore = (await setup.driver.control.calls("ListVolumes")).length;
    await setup.driver.control.forgetPublication({ volumeId: "vol-slow-pages", nodeId });
    try {
      await setup.driver.control.waitFor("vol-slow-pages published again", { timeoutMs: 60_000, intervalMs: 200 }, async () => ((await setup.driver.control.published())["vol-slow-pages"]?.includes(nodeId) ? true : undefined));
    } finally {
      await setup.driver.control.script("ListVolumes", []);
    }
    const slowPass = (await setup.driver.control.calls("ListVolumes")).slice(listedBefore);
    const firstPage = slowPass.findIndex((call) => call.request["startingToken"] === undefined);
    const nextPass = slowPass.findIndex((call, index) => index > firstPage && call.request["startingToken"] === undefined);
    const pages = slowPass.slice(firstPage, nextPass === -1 ? undefined : nextPass);
    const passMs = Date.parse(pages.at(-1)?.finishedAt ?? "") - Date.parse(pages[0]?.startedAt ?? "");
    expect({ codes: pages.map((call) => call.code), longerThanTimeout: passMs > 5_000, enoughPages: pages.length >= 3 }).toEqual({
      codes: pages.map(() => "OK"),
      longerThanTimeout: true,
      enoughPages: true,
    });
  });
});

describe("reconciler off", () => {
  it("never lists volumes when the driver lacks LIST_VOLUMES_PUBLISHED_NODES", async () => {
    const quiet = await startFakeDriverSetup(cluster, admin, {
      driverName: "unlisted.fake.csi.test",
      config: { controllerCapabilities: ["PUBLISH_UNPUBLISH_VOLUME", "LIST_VOLUMES"] },
      nodes: [node],
      attacherArgs: ["--reconcile-sync=1s"],
    });
    try {
      await admin.create(paths.persistentVolumes, persistentVolume("pv-unlisted", { driver: quiet.driverName, volumeHandle: "vol-unlisted" }));
      await admin.create(paths.volumeAttachments, volumeAttachment("unlisted", quiet.driverName, node, "pv-unlisted"));
      await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("unlisted"), (va) => va?.status?.attached === true, 30_000);
      // A reconciler would have listed at once after the caches synced, before this attach.
      expect(await quiet.driver.control.calls("ListVolumes")).toEqual([]);
    } finally {
      await stopFakeDriverSetup(quiet);
    }
  });
});
