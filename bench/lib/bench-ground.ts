/**
 * The ground every attacher runs on in turn: one kube-apiserver + etcd
 * (test/ground), one CSI driver (the fault-injecting one with a
 * configurable publish/unpublish latency, or Kubernetes' mock driver),
 * CSINodes, and helpers that create and remove PVs and VAs in bulk.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AdminClient, createIfAbsent, isNotFound, type KubeObject } from "../../test/ground/admin-client";
import { startMockCsiDriver } from "../../test/ground/mock-csi-driver";
import { startTestCluster, type TestCluster } from "../../test/ground/test-cluster";
import { launchFakeCsiDriver, type FakeCsiDriver } from "../../test/ground/fake-csi-driver/launch";
import { csiTestClient } from "../../test/ground/csi-test-client";
import { csiNode, paths, persistentVolume, volumeAttachment } from "../../test/ground/objects";

/** The driver both attachers serve. */
export const benchDriverName = "bench.csi.test";
/** A driver no attacher here serves: its PVs are the "foreign" ones. */
export const foreignDriverName = "other.csi.test";
/** The PV finalizer both attachers put on PVs of attached VAs. */
export const pvFinalizer = `external-attacher/${benchDriverName.replace(/[^a-zA-Z0-9-]/g, "-")}`;
/** Nodes VAs are spread over. */
export const benchNodes = ["bench-node-a", "bench-node-b", "bench-node-c", "bench-node-d"] as const;
/** Requests the bench client keeps in flight when creating or deleting in bulk. */
export const bulkConcurrency = 32;

/** DriverKind: the fault driver (test/ground/fake-csi-driver) or Kubernetes' mock driver. */
export type DriverKind = "fake" | "mock";

/** BenchGround is the running cluster and driver. */
export interface BenchGround {
  readonly cluster: TestCluster;
  readonly admin: AdminClient;
  readonly driverKind: DriverKind;
  /** The CSI socket the attachers are given. */
  readonly csiSocket: string;
  /** The fault driver, when it is the one running; scenarios that script it need it. */
  readonly fake: FakeCsiDriver | undefined;
  /** Directory for attacher logs. */
  readonly logDir: string;
  /** nodeId is the ID the driver registered on `node` (its CSINode entry). */
  nodeId(node: string): string;
  /** volumeHandle is the driver's ID of own volume `i`, created in the driver first where it must exist. */
  volumeHandle(i: number): Promise<string>;
  stop(): Promise<void>;
}

/**
 * startBenchGround starts the cluster and the driver and registers the
 * driver on every node. Kubernetes' mock driver accepts one node ID only (its
 * name) and publishes only volumes it created, so under it every CSINode
 * carries that ID and own volumes are made with CreateVolume.
 */
export async function startBenchGround(driverKind: DriverKind, driverLatencyMs: number, mockDriverBinary: string): Promise<BenchGround> {
  const cluster = await startTestCluster();
  const admin = new AdminClient(cluster);
  const logDir = mkdtempSync(join(tmpdir(), "bench-logs-"));
  const ground = driverKind === "fake" ? await fakeGround(driverLatencyMs) : await mockGround(mockDriverBinary, logDir);
  for (const node of benchNodes) {
    await admin.create(paths.csiNodes, csiNode(node, [{ name: benchDriverName, nodeID: ground.nodeId(node) }]));
  }
  return {
    cluster,
    admin,
    driverKind,
    logDir,
    ...ground,
    async stop() {
      await ground.stopDriver();
      await cluster.stop();
    },
  };
}

type DriverPart = Pick<BenchGround, "csiSocket" | "fake" | "nodeId" | "volumeHandle"> & { stopDriver(): Promise<void> };

async function fakeGround(driverLatencyMs: number): Promise<DriverPart> {
  const driver = await launchFakeCsiDriver({ config: { name: benchDriverName } });
  await setDriverLatency(driver, driverLatencyMs);
  return {
    csiSocket: driver.csiSocket,
    fake: driver,
    nodeId: (node) => `${node}-id`,
    // The fault driver publishes any volume ID.
    volumeHandle: (i) => Promise.resolve(`vol-${i}`),
    async stopDriver() {
      await driver[Symbol.asyncDispose]();
    },
  };
}

async function mockGround(binary: string, logDir: string): Promise<DriverPart> {
  const driver = await startMockCsiDriver({ binary, dir: logDir, name: benchDriverName });
  const client = csiTestClient(driver.socket);
  const handles = new Map<number, string>();
  return {
    csiSocket: driver.socket,
    fake: undefined,
    nodeId: () => driver.nodeId,
    async volumeHandle(i) {
      const known = handles.get(i);
      if (known !== undefined) return known;
      // The mock numbers volumes itself ("1", "2", ...); CreateVolume of an existing name returns the same volume.
      const created = await client.createVolume({ name: `bench-vol-${i}`, volumeCapabilities: [{ accessType: { case: "mount", value: {} }, accessMode: { mode: 1 } }] });
      const id = created.volume?.volumeId;
      if (id === undefined || id === "") throw new Error(`mock CSI driver returned no volume ID for CreateVolume bench-vol-${i}`);
      handles.set(i, id);
      return id;
    },
    stopDriver: () => driver.stop(),
  };
}

/** fakeDriverOf returns the fault driver, or says which scenario cannot run on another driver. */
export function fakeDriverOf(ground: BenchGround, scenario: string): FakeCsiDriver {
  if (ground.fake === undefined) throw new Error(`${scenario} scripts the fault driver's latency; it cannot run with --driver ${ground.driverKind}`);
  return ground.fake;
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
export async function prepareOwnPvs(ground: BenchGround, count: number, existing: { count: number }): Promise<void> {
  const { admin } = ground;
  if (count > existing.count) {
    const indexes = Array.from({ length: count - existing.count }, (_, k) => existing.count + k);
    await forEachLimited(indexes, bulkConcurrency, async (i) => {
      const volumeHandle = await ground.volumeHandle(i);
      await createIfAbsent(admin, paths.persistentVolumes, persistentVolume(ownPvName(i), { driver: benchDriverName, volumeHandle }));
    });
    existing.count = count;
  }
  await setPvFinalizers(admin, { held: false, concurrency: bulkConcurrency });
}

/**
 * removeOwnPvs deletes the own PVs that exist, so that the next attacher
 * starts on a cluster without them (an idle read must not count them in
 * ours' and Go's caches when the floor client caches none); prepareOwnPvs
 * makes them again. Every finalizer comes off first, or a deleted PV would
 * stay, being deleted, and refuse the next cycle's attaches: the attachers'
 * own, and kubernetes.io/pv-protection, which the apiserver's
 * StorageObjectInUseProtection admission puts on every PV and only the PV
 * protection controller (not running here) takes off. Only while no
 * attacher runs.
 */
export async function removeOwnPvs(ground: BenchGround, existing: { count: number }): Promise<void> {
  const { admin } = ground;
  const indexes = Array.from({ length: existing.count }, (_, i) => i);
  await forEachLimited(indexes, bulkConcurrency, async (i) => {
    const path = paths.persistentVolume(ownPvName(i));
    try {
      await admin.patch(path, { metadata: { finalizers: null } });
      await admin.delete(path);
    } catch (e: unknown) {
      if (!isNotFound(e)) throw e;
    }
  });
  existing.count = 0;
}

/** Options of {@link setPvFinalizers}. */
export interface PvFinalizerOptions {
  /** true: every PV carries the attachers' finalizer, as after an attacher's first attach of it; false: none does, so the next run pays that PV write again. */
  readonly held: boolean;
  /** Only PVs whose name starts with this. Default "": every PV. */
  readonly namePrefix?: string;
  /** Patches in flight. */
  readonly concurrency: number;
}

/**
 * setPvFinalizers puts the attachers' finalizer on, or takes it off, every
 * PV whose finalizers say otherwise. Only while no attacher runs: one would
 * undo it.
 */
export async function setPvFinalizers(admin: AdminClient, options: PvFinalizerOptions): Promise<void> {
  const { held, namePrefix = "", concurrency } = options;
  const changing: KubeObject[] = [];
  await listAll(admin, paths.persistentVolumes, (pv) => {
    if ((pv.metadata?.name ?? "").startsWith(namePrefix) && (pv.metadata?.finalizers?.includes(pvFinalizer) === true) !== held) changing.push(pv);
  });
  await forEachLimited(changing, concurrency, async (pv) => {
    const others = (pv.metadata?.finalizers ?? []).filter((f) => f !== pvFinalizer);
    const finalizers = held ? [...others, pvFinalizer] : others;
    // The resourceVersion makes this a compare-and-swap: no attacher runs
    // now, but a stale read must still not drop someone else's finalizer.
    await admin.patch(paths.persistentVolume(pv.metadata?.name ?? ""), { metadata: { finalizers, resourceVersion: pv.metadata?.resourceVersion } });
  });
}

/** listAll pages through a collection 500 at a time, as the attachers do: the scale scenario's tens of thousands of PVs are too many for one answer. */
export async function listAll<T extends KubeObject = KubeObject>(admin: AdminClient, path: string, onItem: (item: T) => void): Promise<void> {
  let token = "";
  do {
    const page = await admin.list<T>(path, { limit: "500", ...(token === "" ? {} : { continue: token }) });
    for (const item of page.items) onItem(item);
    token = page.metadata?.continue ?? "";
  } while (token !== "");
}

/** createForeignPvs creates `count` PVs of another CSI driver, named from `offset`. */
export async function createForeignPvs(admin: AdminClient, offset: number, count: number): Promise<void> {
  const indexes = Array.from({ length: count }, (_, k) => offset + k);
  await forEachLimited(indexes, bulkConcurrency, async (i) => {
    const name = `foreign-pv-${String(i).padStart(6, "0")}`;
    await createIfAbsent(admin, paths.persistentVolumes, persistentVolume(name, { driver: foreignDriverName, volumeHandle: `foreign-${i}` }));
  });
}

/** vaNode is the node VA `i` of a batch (and own PV `i`) is attached to. */
export const vaNode = (i: number): string => benchNodes[i % benchNodes.length] ?? benchNodes[0];

/**
 * createVas creates VAs `batch-0..count-1` for own PVs 0..count-1, spread
 * over the nodes, and returns their names. `onCreated` sees each creation
 * time and the VA's index.
 */
export async function createVas(admin: AdminClient, batch: string, count: number, onCreated?: (name: string, at: number, index: number) => void): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => vaName(batch, i));
  await forEachLimited(names, bulkConcurrency, async (name, i) => {
    await admin.create(paths.volumeAttachments, volumeAttachment(name, benchDriverName, vaNode(i), ownPvName(i)));
    onCreated?.(name, performance.now(), i);
  });
  return names;
}

/** createVa creates one VA for own PV `pvIndex`. */
export async function createVa(admin: AdminClient, name: string, pvIndex: number): Promise<void> {
  await admin.create(paths.volumeAttachments, volumeAttachment(name, benchDriverName, vaNode(pvIndex), ownPvName(pvIndex)));
}

/** deleteVas asks for the deletion of `names`; the attacher's detach finishes it. `onDeleted` sees each name once its delete was answered. */
export async function deleteVas(admin: AdminClient, names: readonly string[], onDeleted?: (name: string, index: number) => void): Promise<void> {
  await forEachLimited(names, bulkConcurrency, async (name, i) => {
    try {
      await admin.delete(paths.volumeAttachment(name));
    } catch (e: unknown) {
      if (!isNotFound(e)) throw e;
    }
    onDeleted?.(name, i);
  });
}

