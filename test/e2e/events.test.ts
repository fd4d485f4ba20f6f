import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { AdminClient, type KubeObject } from "../ground/admin-client";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { waitForCondition } from "../ground/managed-process";
import { startFakeDriverSetup, stopFakeDriverSetup, type FakeDriverSetup } from "./support/fake-driver-ground";
import { isWatchOrderingError, paths, persistentVolume, volumeAttachment, type VolumeAttachmentJson } from "../ground/objects";

/**
 * Beyond upstream: a Warning Event on the VolumeAttachment for each attach
 * or detach failure, where `kubectl describe volumeattachment` finds it
 * (core/v1 events by involvedObject; cluster-scoped objects' events live in
 * "default"), aggregated so a retry storm is one object with a count.
 */
let cluster: TestCluster;
let admin: AdminClient;
let setup: FakeDriverSetup;
const node = "events-node";

interface EventJson extends KubeObject {
  involvedObject?: { kind?: string; apiVersion?: string; name?: string; uid?: string; namespace?: string };
  reason?: string;
  message?: string;
  type?: string;
  count?: number;
  source?: { component?: string; host?: string };
  firstTimestamp?: string;
  lastTimestamp?: string;
}

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  setup = await startFakeDriverSetup(cluster, admin, {
    driverName: "events.fake.csi.test",
    nodes: [node],
    // Fast retries make a storm of identical failures within a test's patience.
    attacherArgs: ["--retry-interval-start=50ms", "--retry-interval-max=200ms"],
  });
});

afterAll(async () => {
  await stopFakeDriverSetup(setup);
  await cluster?.stop();
});

async function eventsAbout(vaName: string): Promise<EventJson[]> {
  const list = await admin.list<EventJson>("/api/v1/namespaces/default/events", { fieldSelector: `involvedObject.kind=VolumeAttachment,involvedObject.name=${vaName}` });
  return list.items;
}

async function waitForEvents(vaName: string, predicate: (events: EventJson[]) => boolean): Promise<EventJson[]> {
  let events: EventJson[] = [];
  await waitForCondition(
    async () => {
      events = await eventsAbout(vaName);
      return predicate(events);
    },
    { description: `events about VolumeAttachment ${vaName}`, timeoutMs: 60_000, intervalMs: 200, watch: [setup.attacher.process] },
  );
  return events;
}

async function createVolumeAttachment(name: string): Promise<KubeObject> {
  await admin.create(paths.persistentVolumes, persistentVolume(`pv-${name}`, { driver: setup.driverName, volumeHandle: `vol-${name}` }));
  return admin.create<KubeObject>(paths.volumeAttachments, volumeAttachment(name, setup.driverName, node, `pv-${name}`));
}

describe("failure events", () => {
  it("records AttachFailed on the VA with the attachError's text, and folds repeats into one event's count", async () => {
    await setup.driver.control.script("ControllerPublishVolume", [{ code: "Internal", message: "array offline", always: true, volumeId: "vol-ev-attach" }]);
    const va = await createVolumeAttachment("ev-attach");
    // The PV and the VA reach the attacher on two watches, so the VA can come
    // first and fail once as "persistentvolume ... not found", an Event of its
    // own (isWatchOrderingError). Every Event is an AttachFailed; all others
    // are the repeats of the driver's one failure, folded into one.
    const settled = (found: EventJson[]) => found.filter((event) => !isWatchOrderingError(event.message ?? ""));
    const events = await waitForEvents("ev-attach", (found) => (settled(found)[0]?.count ?? 0) >= 3);
    expect(events.map((event) => `${event.type} ${event.reason}`)).toEqual(events.map(() => "Warning AttachFailed"));
    expect(settled(events).length).toBe(1);
    const [event] = settled(events);
    expect({
      namespace: event?.metadata?.namespace,
      involvedObject: event?.involvedObject,
      reason: event?.reason,
      type: event?.type,
      message: event?.message,
      component: event?.source?.component,
    }).toEqual({
      namespace: "default",
      involvedObject: expect.objectContaining({ kind: "VolumeAttachment", apiVersion: "storage.k8s.io/v1", name: "ev-attach", uid: va.metadata?.uid }),
      reason: "AttachFailed",
      type: "Warning",
      message: "rpc error: code = Internal desc = array offline",
      component: "csi-attacher",
    });
    const status = await admin.get<VolumeAttachmentJson>(paths.volumeAttachment("ev-attach"));
    expect(event?.message).toBe(status.status?.attachError?.message);
    await setup.driver.control.clearScripts();
    await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("ev-attach"), (current) => current?.status?.attached === true, 30_000);
  });

  it("records DetachFailed when unpublishing a deleted VA fails", async () => {
    await createVolumeAttachment("ev-detach");
    await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("ev-detach"), (current) => current?.status?.attached === true, 30_000);
    await setup.driver.control.script("ControllerUnpublishVolume", [{ code: "Unavailable", message: "controller busy", times: 2, volumeId: "vol-ev-detach" }]);
    await admin.delete(paths.volumeAttachment("ev-detach"));
    const events = await waitForEvents("ev-detach", (found) => found.some((event) => event.reason === "DetachFailed"));
    expect(events.filter((event) => event.reason === "DetachFailed").map((event) => event.message)).toEqual(["rpc error: code = Unavailable desc = controller busy"]);
    await admin.waitFor(paths.volumeAttachment("ev-detach"), (current) => current === null, 30_000);
  });
});
