import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { AdminClient } from "../ground/admin-client";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { attacherBinary } from "../ground/attacher-process";
import { startFakeDriverSetup, stopFakeDriverSetup, type FakeDriverSetup } from "./support/fake-driver-ground";
import { paths, persistentVolume, volumeAttachment, type VolumeAttachmentJson } from "../ground/objects";

/**
 * `csi-attacher doctor` against the real ground: one healthy, one failing
 * and one drifted volume of a driver that lists published nodes, and a
 * healthy one of a driver that cannot. Each driver's attacher is stopped
 * before the doctor runs, so any write or publish seen afterwards would be
 * the doctor's.
 */
let cluster: TestCluster;
let admin: AdminClient;
let listing: FakeDriverSetup | undefined;
let plain: FakeDriverSetup | undefined;
const node = "doctor-node";
const nodeId = `${node}-id`;

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  listing = await startFakeDriverSetup(cluster, admin, {
    driverName: "doctor.fake.csi.test",
    config: { controllerCapabilities: ["PUBLISH_UNPUBLISH_VOLUME", "LIST_VOLUMES", "LIST_VOLUMES_PUBLISHED_NODES"] },
    nodes: [node],
    // No reconciler pass during the test: it would repair the drift the doctor must see.
    attacherArgs: ["--reconcile-sync=1h", "--retry-interval-start=100ms", "--retry-interval-max=1s"],
  });
  plain = await startFakeDriverSetup(cluster, admin, { driverName: "doctor-plain.fake.csi.test", nodes: [node] });
});

afterAll(async () => {
  await stopFakeDriverSetup(listing);
  await stopFakeDriverSetup(plain);
  await cluster?.stop();
});

async function createVolumeAttachment(setup: FakeDriverSetup, name: string): Promise<void> {
  await admin.create(paths.persistentVolumes, persistentVolume(`pv-${name}`, { driver: setup.driverName, volumeHandle: `vol-${name}` }));
  await admin.create(paths.volumeAttachments, volumeAttachment(name, setup.driverName, node, `pv-${name}`));
}

function waitForVa(name: string, predicate: (va: VolumeAttachmentJson | null) => boolean): Promise<VolumeAttachmentJson | null> {
  return admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment(name), predicate, 60_000);
}

function runDoctor(setup: FakeDriverSetup, ...args: string[]) {
  const run = Bun.spawnSync([attacherBinary, "doctor", `--kubeconfig=${cluster.kubeconfigPath}`, `--csi-address=${setup.driver.csiSocket}`, ...args]);
  return { code: run.exitCode, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

/** The cells of a table row up to the first word of ERROR, without AGE (which depends on timing). */
function withoutAge(cells: readonly string[]): string[] {
  return [...cells.slice(0, 4), ...cells.slice(5, 8)];
}

async function resourceVersions(): Promise<Record<string, string | undefined>> {
  const list = await admin.list<VolumeAttachmentJson>(paths.volumeAttachments);
  return Object.fromEntries(list.items.map((va) => [va.metadata.name, va.metadata.resourceVersion]));
}

describe("csi-attacher doctor", () => {
  it("lists a healthy, a failing and a drifted volume, says which are problems, and exits 1 without writing anything", async () => {
    const setup = listing!;
    await setup.driver.control.script("ControllerPublishVolume", [{ code: "Internal", message: "array offline", always: true, volumeId: "vol-failing" }]);
    for (const name of ["healthy", "failing", "drifted"]) await createVolumeAttachment(setup, name);
    await waitForVa("healthy", (va) => va?.status?.attached === true);
    // The first try may fail on a PV not yet in the cache; wait for the driver's own error.
    await waitForVa("failing", (va) => va?.status?.attachError?.message?.includes("array offline") === true);
    await waitForVa("drifted", (va) => va?.status?.attached === true);
    // The back end detaches the volume on its own; the VA still says attached.
    await setup.driver.control.forgetPublication({ volumeId: "vol-drifted", nodeId });
    await setup.attacher[Symbol.asyncDispose]();
    const before = { versions: await resourceVersions(), publishes: (await setup.driver.control.calls()).length };

    const json = runDoctor(setup, "--output=json");
    const report = JSON.parse(json.stdout) as {
      driver: unknown;
      problems: number;
      volumeAttachments: { name: string; node: string; pv: string; attached: boolean; error: string; state: string; driver: string; detail: string; problem: boolean }[];
    };
    expect({ code: json.code, stderr: json.stderr, driver: report.driver, problems: report.problems }).toEqual({
      code: 1,
      stderr: "",
      driver: { name: "doctor.fake.csi.test", checkedPublishedNodes: true },
      problems: 2,
    });
    expect(report.volumeAttachments.map(({ name, node, pv, attached, error, state, driver, detail, problem }) => ({ name, node, pv, attached, error, state, driver, detail, problem }))).toEqual([
      {
        name: "drifted",
        node,
        pv: "pv-drifted",
        attached: true,
        error: "",
        state: "drifted",
        driver: "disagrees",
        detail: `driver does not have volume vol-drifted published to node ID ${nodeId}, status says attached`,
        problem: true,
      },
      { name: "failing", node, pv: "pv-failing", attached: false, error: "rpc error: code = Internal desc = array offline", state: "attach-failed", driver: "agrees", detail: "", problem: true },
      { name: "healthy", node, pv: "pv-healthy", attached: true, error: "", state: "attached", driver: "agrees", detail: "", problem: false },
    ]);

    const table = runDoctor(setup);
    const lines = table.stdout.trimEnd().split("\n");
    expect({ code: table.code, header: lines[0]?.split(/\s+/), rows: lines.slice(1, 4).map((line) => withoutAge(line.split(/\s+/))) }).toEqual({
      code: 1,
      header: ["NAME", "NODE", "PV", "ATTACHED", "AGE", "DRIVER", "STATE", "ERROR"],
      rows: [
        ["drifted", node, "pv-drifted", "true", "disagrees", "drifted", "driver"],
        ["failing", node, "pv-failing", "false", "agrees", "attach-failed", "rpc"],
        ["healthy", node, "pv-healthy", "true", "agrees", "attached", "-"],
      ],
    });
    expect(lines.at(-1)).toBe("driver doctor.fake.csi.test: 3 VolumeAttachments, 2 of 3 with problems; published nodes compared with the driver's ListVolumes");

    // Read-only: no object changed and the driver saw no call but identity, capabilities and ListVolumes.
    const after = await setup.driver.control.calls();
    expect({ versions: await resourceVersions(), driverCalls: [...new Set(after.slice(before.publishes).map((call) => call.method))].sort() }).toEqual({
      versions: before.versions,
      driverCalls: ["ControllerGetCapabilities", "GetPluginCapabilities", "GetPluginInfo", "ListVolumes"],
    });
  });

  it("exits 0 for a healthy volume of a driver that cannot list published nodes, and says the driver column is unchecked", async () => {
    const setup = plain!;
    await createVolumeAttachment(setup, "plain");
    await waitForVa("plain", (va) => va?.status?.attached === true);
    await setup.attacher[Symbol.asyncDispose]();

    const run = runDoctor(setup, "--output=json");
    const report = JSON.parse(run.stdout) as { driver: unknown; problems: number; volumeAttachments: { name: string; state: string; driver: string }[] };
    expect({ code: run.code, driver: report.driver, problems: report.problems, rows: report.volumeAttachments.map(({ name, state, driver }) => ({ name, state, driver })) }).toEqual({
      code: 0,
      driver: { name: "doctor-plain.fake.csi.test", checkedPublishedNodes: false },
      problems: 0,
      rows: [{ name: "plain", state: "attached", driver: "unchecked" }],
    });
  });

  it("exits 3 with one line naming the socket when the driver cannot be reached", () => {
    const run = Bun.spawnSync([attacherBinary, "doctor", `--kubeconfig=${cluster.kubeconfigPath}`, "--csi-address=/nonexistent/csi.sock", "--timeout=2s"]);
    expect({ code: run.exitCode, stdout: run.stdout.toString() }).toEqual({ code: 3, stdout: "" });
    expect(run.stderr.toString()).toStartWith(`csi-attacher doctor: cannot read the cluster or the driver (--kubeconfig="${cluster.kubeconfigPath}", --csi-address=/nonexistent/csi.sock): `);
  });
});
