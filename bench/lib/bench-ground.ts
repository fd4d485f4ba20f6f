/**
 * The ground every attacher runs on in turn: one kube-apiserver + etcd
 * (test/cluster), one fault-injecting CSI driver with a configurable
 * publish/unpublish latency, CSINodes, and helpers that create and remove
 * PVs and VAs in bulk.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AdminApiError, AdminClient, isNotFound, type KubeObject } from "../../test/cluster/admin-client.ts";
import { startTestCluster, type TestCluster } from "../../test/cluster/test-cluster.ts";
import { launchFakeCsiDriver, type FakeCsiDriver } from "../../test/drivers/fake-csi-driver/launch.ts";
import { csiNode, paths, persistentVolume, volumeAttachment } from "../../test/e2e/support/objects.ts";

/** The driver both attachers serve. */
export const benchDriverName = "bench.csi.test";
/** A driver no attacher here serves: its PVs are the "foreign" ones. */
export const foreignDriverName = "other.csi.test";
/** The PV finalizer both attachers put on PVs of attached VAs. */
export const pvFinalizer = `external-attacher/${benchDriverName.replace(/[^a-zA-Z0-9-]/g, "-")}`;
/** Nodes VAs are spread over. */
export const benchNodes = ["bench-node-a", "bench-node-b", "bench-node-c", "bench-node-d"] as const;
/** Requests the bench client keeps in flight when creating or deleting in bulk. */
const bulkConcurrency = 32;

/** BenchGround is the running cluster and driver. */
export interface BenchGround {
  readonly cluster: TestCluster;
  readonly admin: AdminClient;
  readonly driver: FakeCsiDriver;
  /** Directory for attacher logs. */
  readonly logDir: string;
  stop(): Promise<void>;
}

/** startBenchGround starts the cluster and the driver and registers the driver on every node. */
export async function startBenchGround(driverLatencyMs: number): Promise<BenchGround> {
  const cluster = await startTestCluster();
  const admin = new AdminClient(cluster);
  const logDir = mkdtempSync(join(tmpdir(), "bench-logs-"));
  const driver = await launchFakeCsiDriver({ config: { name: benchDriverName } });
  await setDriverLatency(driver, driverLatencyMs);
  for (const node of benchNodes) {
    await admin.create(paths.csiNodes, csiNode(node, [{ name: benchDriverName, nodeID: `${node}-id` }]));
  }
  return {
    cluster,
    admin,
    driver,
    logDir,
    async stop() {
      await driver[Symbol.asyncDispose]();
      await cluster.stop();
    },
  };
}

/** setDriverLatency makes every ControllerPublish/Unpublish take `ms` before it answers (0: at once). */
export async function setDriverLatency(driver: FakeCsiDriver, ms: number): Promise<void> {
  const answers = ms > 0 ? [{ always: true, delayMs: ms }] : [];
  await driver.control.script("ControllerPublishVolume", answers);
  await driver.control.script("ControllerUnpublishVolume", answers);
}

/** forEachLimited runs `fn` over `items` with at most `limit` calls in flight. */
export async function forEachLimited<T>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      await fn(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** ownPvName is the name of own PV `i`; VA `i` uses it. */
export const ownPvName = (i: number) => `bench-pv-${String(i).padStart(6, "0")}`;
/** vaName is the name of VA `i` of a batch. */
export const vaName = (batch: string, i: number) => `${batch}-${String(i).padStart(6, "0")}`;

/**
 * prepareOwnPvs makes own PVs 0..count-1 exist without the attachers'
 * finalizer. Both attachers put the same finalizer on a PV at its first
 * attach and (as upstream) only take it off when the PV is deleted, so
 * without this every run after the first would skip the PV writes the first
 * one paid for. PVs themselves are reused by every run.
 */
export async function prepareOwnPvs(admin: AdminClient, count: number, existing: { count: number }): Promise<void> {
  if (count > existing.count) {
    const indexes = Array.from({ length: count - existing.count }, (_, k) => existing.count + k);
    await forEachLimited(indexes, bulkConcurrency, async (i) => {
      await createIgnoringExisting(admin, paths.persistentVolumes, persistentVolume(ownPvName(i), { driver: benchDriverName, volumeHandle: `vol-${i}` }));
    });
    existing.count = count;
  }
  const held = (await admin.list(paths.persistentVolumes)).items.filter((pv) => pv.metadata?.finalizers?.includes(pvFinalizer) === true);
  await forEachLimited(held, bulkConcurrency, async (pv) => {
    const name = pv.metadata?.name ?? "";
    const finalizers = (pv.metadata?.finalizers ?? []).filter((f) => f !== pvFinalizer);
    // The resourceVersion makes this a compare-and-swap: no attacher runs
    // now, but a stale read must still not drop someone else's finalizer.
    await admin.patch(paths.persistentVolume(name), { metadata: { finalizers, resourceVersion: pv.metadata?.resourceVersion } });
  });
}

/** createForeignPvs creates `count` PVs of another CSI driver, named from `offset`. */
export async function createForeignPvs(admin: AdminClient, offset: number, count: number): Promise<void> {
  const indexes = Array.from({ length: count }, (_, k) => offset + k);
  await forEachLimited(indexes, bulkConcurrency, async (i) => {
    const name = `foreign-pv-${String(i).padStart(6, "0")}`;
    await createIgnoringExisting(admin, paths.persistentVolumes, persistentVolume(name, { driver: foreignDriverName, volumeHandle: `foreign-${i}` }));
  });
}

/**
 * createVas creates VAs `batch-0..count-1` for own PVs 0..count-1, spread
 * over the nodes, and returns their names. `onCreated` sees each creation time.
 */
export async function createVas(admin: AdminClient, batch: string, count: number, onCreated?: (name: string, at: number) => void): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => vaName(batch, i));
  await forEachLimited(names, bulkConcurrency, async (name, i) => {
    const node = benchNodes[i % benchNodes.length] ?? benchNodes[0];
    await admin.create(paths.volumeAttachments, volumeAttachment(name, benchDriverName, node, ownPvName(i)));
    onCreated?.(name, performance.now());
  });
  return names;
}

/** createVa creates one VA for own PV `pvIndex`. */
export async function createVa(admin: AdminClient, name: string, pvIndex: number): Promise<void> {
  const node = benchNodes[pvIndex % benchNodes.length] ?? benchNodes[0];
  await admin.create(paths.volumeAttachments, volumeAttachment(name, benchDriverName, node, ownPvName(pvIndex)));
}

/** deleteVas asks for the deletion of `names`; the attacher's detach finishes it. */
export async function deleteVas(admin: AdminClient, names: readonly string[]): Promise<void> {
  await forEachLimited(names, bulkConcurrency, async (name) => {
    try {
      await admin.delete(paths.volumeAttachment(name));
    } catch (e: unknown) {
      if (!isNotFound(e)) throw e;
    }
  });
}

async function createIgnoringExisting(admin: AdminClient, path: string, body: KubeObject): Promise<void> {
  try {
    await admin.create(path, body);
  } catch (e: unknown) {
    if (e instanceof AdminApiError && e.reason === "AlreadyExists") return;
    throw e;
  }
}
