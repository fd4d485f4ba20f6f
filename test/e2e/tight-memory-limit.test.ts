import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdirSync, readFileSync, rmdirSync } from "node:fs";
import { dropPageCache, MemoryGroup, whyUnusable } from "../ground/memory-cgroup";
import { AdminClient } from "../ground/admin-client";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { launchFakeCsiDriver, type FakeCsiDriver } from "../ground/fake-csi-driver/launch";
import { startAttacher, type AttacherProcess } from "../ground/attacher-process";
import { csiNode, paths, persistentVolume, volumeAttachment, type VolumeAttachmentJson } from "../ground/objects";

/**
 * The memory limit the compiled attacher must do its work under: the
 * smallest limit that held 300 VAs in the bench's container-limit scenario
 * (the larger of its two rounds, see LIMIT_SOURCE), plus a margin for a
 * busier machine (the test runs beside other end-to-end tests).
 */
const MiB = 1024 * 1024;
const LIMIT_SOURCE = "bench/results/2026-11-23T1802-container-limit (300 VAs): ours held at 96 and 104 MiB";
const limitBytes = (104 + 16) * MiB;
const volumeCount = 300;
const driverName = "tight.fake.csi.test";
const nodes = ["tight-node-a", "tight-node-b", "tight-node-c", "tight-node-d"];
const names = Array.from({ length: volumeCount }, (_, i) => `tight-${String(i).padStart(3, "0")}`);

/** Why this machine cannot run the test, found before anything starts: the test then fails saying so, it never skips. */
const missing = whyUnusable();
let cluster: TestCluster | undefined;
let admin: AdminClient;
let driver: FakeCsiDriver | undefined;
let group: MemoryGroup | undefined;
let attacher: AttacherProcess | undefined;

beforeAll(async () => {
  if (missing !== undefined) return;
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  driver = await launchFakeCsiDriver({ config: { name: driverName } });
  for (const node of nodes) await admin.create(paths.csiNodes, csiNode(node, [{ name: driverName, nodeID: `${node}-id` }]));
  await Promise.all(names.map((name) => admin.create(paths.persistentVolumes, persistentVolume(`pv-${name}`, { driver: driverName, volumeHandle: `vol-${name}` }))));
});

afterAll(async () => {
  await attacher?.[Symbol.asyncDispose]();
  group?.remove();
  await driver?.[Symbol.asyncDispose]();
  await cluster?.stop();
});

async function ownVolumeAttachments(): Promise<VolumeAttachmentJson[]> {
  return (await admin.list<VolumeAttachmentJson>(paths.volumeAttachments)).items.filter((va) => va.spec.attacher === driverName);
}

/** waitUntil polls `done` every 100 ms until it holds or `timeoutMs` passes; says whether it held. */
async function waitUntil(done: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await done()) return true;
    await Bun.sleep(100);
  }
  return done();
}

describe("a memory limit on an ancestor cgroup only (a pod-level limit)", () => {
  it("sizes JavaScriptCore's heap by it: the attacher runs with BUN_JSC_forceRAMSize set to the limit, which Bun's own detection misses", async () => {
    if (missing !== undefined) throw new Error(`this test needs a writable memory cgroup and must not be skipped: ${missing}`);
    const parent = MemoryGroup.create(`e2e-ancestor-limit-${process.pid}`);
    const child = `${parent.dir}/container`;
    mkdirSync(child);
    try {
      parent.setLimit(limitBytes);
      await using attacher = await startAttacher(
        { kubeconfig: cluster?.kubeconfigPath ?? "", csiAddress: driver?.csiSocket ?? "", logDir: driver?.directory ?? "/tmp", name: "ancestor-limit", wrapper: ["/bin/sh", "-c", `echo $$ > '${child}/cgroup.procs' && exec "$@"`, "sh"] },
        false,
      );
      await attacher.waitForLog(/"Memory limit"/);
      const environ = readFileSync(`/proc/${attacher.process.pid}/environ`, "utf8").split("\0");
      expect(environ.filter((entry) => entry.startsWith("BUN_JSC_forceRAMSize="))).toEqual([`BUN_JSC_forceRAMSize=${limitBytes}`]);
      expect(attacher.log()).toContain(`"Memory limit" limit=${limitBytes} cgroup="${child}"`);
    } finally {
      rmdirSync(child);
      parent.remove();
    }
  });
});

describe(`the compiled attacher in a ${limitBytes / MiB} MiB memory cgroup`, () => {
  it(`attaches and detaches ${volumeCount} VAs with no OOM kill (limit from ${LIMIT_SOURCE}, plus 16 MiB)`, async () => {
    if (missing !== undefined) throw new Error(`this test needs a writable memory cgroup and must not be skipped: ${missing}`);
    group = MemoryGroup.create(`e2e-tight-memory-${process.pid}`);
    group.setLimit(limitBytes);
    // As in a fresh container: the binary's pages are read again and charged to the group.
    dropPageCache();
    const memoryGroup = group;
    attacher = await startAttacher({ kubeconfig: cluster?.kubeconfigPath ?? "", csiAddress: driver?.csiSocket ?? "", logDir: driver?.directory ?? "/tmp", name: "tight-memory", wrapper: memoryGroup.wrapper() });
    // The attacher found the limit of the group it runs in.
    expect(attacher.log()).toContain(`"Memory limit" limit=${limitBytes} cgroup="${memoryGroup.dir}"`);

    await Promise.all(names.map((name, i) => admin.create(paths.volumeAttachments, volumeAttachment(name, driverName, nodes[i % nodes.length] ?? "", `pv-${name}`))));
    const allAttached = await waitUntil(async () => (await ownVolumeAttachments()).filter((va) => va.status?.attached === true).length === volumeCount, 120_000);
    const afterAttach = { allAttached, oomKills: memoryGroup.oomKills(), running: attacher.process.running };
    expect(afterAttach).toEqual({ allAttached: true, oomKills: 0, running: true });

    await Promise.all(names.map((name) => admin.delete(paths.volumeAttachment(name))));
    const allGone = await waitUntil(async () => (await ownVolumeAttachments()).length === 0, 120_000);
    expect({ allGone, oomKills: memoryGroup.oomKills(), running: attacher.process.running, published: await driver?.control.published() }).toEqual({
      allGone: true,
      oomKills: 0,
      running: true,
      published: Object.fromEntries(names.map((name) => [`vol-${name}`, []])),
    });
  }, 400_000);
});
