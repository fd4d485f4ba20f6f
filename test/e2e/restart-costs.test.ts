import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { AdminClient } from "../cluster/admin-client";
import { waitForCondition } from "../cluster/managed-process";
import { startTestCluster, type TestCluster } from "../cluster/test-cluster";
import type { DriverConfigPatch } from "../drivers/fake-csi-driver/config";
import { startAttacher, type AttacherProcess } from "./support/attacher-process";
import { startFakeDriverSetup, stopFakeDriverSetup, type FakeDriverSetup } from "./support/fake-driver-ground";
import { paths, persistentVolume, volumeAttachment, type VolumeAttachmentJson } from "./support/objects";
import { deletePvAsReclaimWould } from "./support/pv-deletion";

/**
 * What a restart costs the storage backend: nothing. Nine PVs on six nodes
 * are attached once each, three detached again (their PVs keep our
 * finalizer, as every detached volume's does until its PV is deleted), then
 * the attacher restarts — killed and started again, or handed over between
 * two leader-election replicas — and the six remaining VAs and then all nine
 * PVs are deleted. The driver must see exactly what upstream's attacher
 * sends: one ControllerUnpublishVolume per VA, on its node, for a driver
 * that cannot list where volumes are published and for one that can.
 */
let cluster: TestCluster;
let admin: AdminClient;
const nodes = ["cost-node-0", "cost-node-1", "cost-node-2", "cost-node-3", "cost-node-4", "cost-node-5"];
const listing: DriverConfigPatch["controllerCapabilities"] = ["PUBLISH_UNPUBLISH_VOLUME", "LIST_VOLUMES", "LIST_VOLUMES_PUBLISHED_NODES"];
const common = ["--retry-interval-start=100ms", "--retry-interval-max=1s", "--reconcile-sync=1m"];
const leaderElection = ["--leader-election", "--leader-election-namespace=default", "--leader-election-retry-period=500ms", "--feature-gates=ReleaseLeaderElectionOnExit=true"];
const setups: FakeDriverSetup[] = [];
const extraAttachers: AttacherProcess[] = [];

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
});

afterAll(async () => {
  for (const attacher of extraAttachers) await attacher[Symbol.asyncDispose]();
  for (const setup of setups) await stopFakeDriverSetup(setup);
  await cluster?.stop();
});

type Restart = "kill and start again" | "leader-election hand-over";

/** One volume: its VA, PV and handle, and the node ID its VA names. */
interface Volume {
  readonly va: string;
  readonly pv: string;
  readonly handle: string;
  readonly nodeId: string;
}

function waitForVa(name: string, predicate: (va: VolumeAttachmentJson | null) => boolean): Promise<unknown> {
  return admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment(name), predicate, 60_000);
}

/** unpublishedPairs lists every ControllerUnpublishVolume the driver answered, as volume@nodeId with its code. */
async function unpublishedPairs(setup: FakeDriverSetup): Promise<string[]> {
  return (await setup.driver.control.calls("ControllerUnpublishVolume")).map((call) => `${String(call.request["volumeId"])}@${String(call.request["nodeId"])} ${call.code ?? "unfinished"}`);
}

/**
 * restartOf ends the running attacher and leaves the next one leading with
 * synced caches: SIGKILL and a new process, or two replicas under leader
 * election where the leader stops with SIGTERM and releases the Lease.
 */
async function restartOf(setup: FakeDriverSetup, restart: Restart, args: readonly string[]): Promise<void> {
  const options = { kubeconfig: cluster.kubeconfigPath, csiAddress: setup.driver.csiSocket, logDir: setup.dir, args };
  if (restart === "kill and start again") {
    setup.attacher.process.killNow();
    await waitForCondition(() => !setup.attacher.process.running, { description: "the attacher to die", timeoutMs: 10_000 });
    extraAttachers.push(await startAttacher({ ...options, name: `attacher-${setup.driverName}-again` }));
    return;
  }
  const standby = await startAttacher({ ...options, name: `attacher-${setup.driverName}-standby`, hostname: `${setup.driverName}-standby` }, false);
  extraAttachers.push(standby);
  await setup.attacher.process.stop();
  await standby.waitForLog(/"Caches synced"/, 60_000);
}

async function costOfRestart(driverName: string, capabilities: DriverConfigPatch["controllerCapabilities"] | undefined, restart: Restart) {
  const args = restart === "leader-election hand-over" ? [...common, ...leaderElection] : common;
  const setup = await startFakeDriverSetup(cluster, admin, {
    driverName,
    nodes,
    attacherArgs: args,
    ...(capabilities ? { config: { controllerCapabilities: capabilities } } : {}),
    ...(restart === "leader-election hand-over" ? { attacherCommand: { hostname: `${driverName}-leader` } } : {}),
  });
  setups.push(setup);
  const volumes: Volume[] = Array.from({ length: 9 }, (_, index) => {
    const node = nodes[index % nodes.length] ?? "";
    return { va: `${driverName}-${index}`, pv: `pv-${driverName}-${index}`, handle: `vol-${driverName}-${index}`, nodeId: `${node}-id` };
  });
  for (const [index, volume] of volumes.entries()) {
    await admin.create(paths.persistentVolumes, persistentVolume(volume.pv, { driver: driverName, volumeHandle: volume.handle }));
    await admin.create(paths.volumeAttachments, volumeAttachment(volume.va, driverName, nodes[index % nodes.length] ?? "", volume.pv));
  }
  for (const volume of volumes) await waitForVa(volume.va, (va) => va?.status?.attached === true);
  const detachedBefore = volumes.slice(6);
  for (const volume of detachedBefore) await admin.delete(paths.volumeAttachment(volume.va));
  for (const volume of detachedBefore) await waitForVa(volume.va, (va) => va === null);
  const unpublishesBefore = (await unpublishedPairs(setup)).length;

  await restartOf(setup, restart, args);

  const attachedAtRestart = volumes.slice(0, 6);
  for (const volume of attachedAtRestart) await admin.delete(paths.volumeAttachment(volume.va));
  for (const volume of attachedAtRestart) await waitForVa(volume.va, (va) => va === null);
  for (const volume of volumes) await deletePvAsReclaimWould(admin, volume.pv);
  for (const volume of volumes) await admin.waitFor(paths.persistentVolume(volume.pv), (pv) => pv === null, 60_000);
  const unpublishes = await unpublishedPairs(setup);
  const publishes = await setup.driver.control.calls("ControllerPublishVolume");
  return {
    afterRestart: unpublishes.slice(unpublishesBefore).sort(),
    all: unpublishes.sort(),
    publishes: publishes.length,
    expected: {
      afterRestart: attachedAtRestart.map((volume) => `${volume.handle}@${volume.nodeId} OK`).sort(),
      all: volumes.map((volume) => `${volume.handle}@${volume.nodeId} OK`).sort(),
      publishes: volumes.length,
    },
  };
}

describe("a restart", () => {
  const cases: { kind: string; driverName: string; capabilities: DriverConfigPatch["controllerCapabilities"] | undefined; restart: Restart }[] = [
    { kind: "that cannot list where volumes are published", driverName: "cost-blind-kill", capabilities: undefined, restart: "kill and start again" },
    { kind: "that lists where volumes are published", driverName: "cost-list-kill", capabilities: listing, restart: "kill and start again" },
    { kind: "that cannot list where volumes are published", driverName: "cost-blind-handover", capabilities: undefined, restart: "leader-election hand-over" },
    { kind: "that lists where volumes are published", driverName: "cost-list-handover", capabilities: listing, restart: "leader-election hand-over" },
  ];
  for (const { kind, driverName, capabilities, restart } of cases) {
    it(`(${restart}) costs a driver ${kind} exactly upstream's calls: one unpublish per VA, on its node, and none elsewhere`, async () => {
      const { expected, ...seen } = await costOfRestart(driverName, capabilities, restart);
      expect(seen).toEqual(expected);
    });
  }
});
