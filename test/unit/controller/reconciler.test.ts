import { describe, expect, it } from "bun:test";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createRouterTransport } from "@connectrpc/connect";
import { Controller, ListVolumesResponseSchema, type ListVolumesRequest } from "../../../gen/csi/v1/csi_pb";
import { AttachController } from "../../../src/controller/attach-controller";
import { ForcedSyncs } from "../../../src/controller/forced-syncs";
import type { Handler } from "../../../src/controller/handler";
import { InheritedPublications } from "../../../src/controller/inherited-publications";
import { Reconciler } from "../../../src/controller/reconciler";
import { CsiClient } from "../../../src/csi/csi-client";
import { parseCsiNode, type CsiNode } from "../../../src/kube/objects/csi-node";
import { parsePersistentVolume, type PersistentVolume } from "../../../src/kube/objects/persistent-volume";
import { parseVolumeAttachment, type VolumeAttachment } from "../../../src/kube/objects/volume-attachment";
import type { KubeObject } from "../../../src/kube/objects/object-meta";
import { Store } from "../../../src/kube/store";
import { Logger } from "../../../src/log/logger";
import { WorkQueue } from "../../../src/queue/work-queue";
import { FakeClock } from "../queue/fake-clock";
import { settle } from "../queue/settle";

const driver = "ours.csi.test";

/** One volume as the driver reports it: its handle and the nodes it is published to. */
type DriverVolume = readonly [volumeId: string, nodeIds: readonly string[]];

/**
 * fakeDriver serves ListVolumes from `volumes` through an in-memory Connect
 * transport, paging by offset tokens as a real driver may, and records every
 * request. `failures` answers the next calls with Unavailable; `duringListing`
 * runs inside each call, as whatever happens while the driver is asked.
 */
function fakeDriver(volumes: DriverVolume[], failures = 0, duringListing: () => void = () => {}) {
  const requests: { maxEntries: number; startingToken: string }[] = [];
  let failing = failures;
  const transport = createRouterTransport(({ service }) => {
    service(Controller, {
      listVolumes(request: ListVolumesRequest) {
        requests.push({ maxEntries: request.maxEntries, startingToken: request.startingToken });
        duringListing();
        if (failing > 0) {
          failing--;
          throw new ConnectError("backend down", Code.Unavailable);
        }
        const offset = request.startingToken === "" ? 0 : Number(request.startingToken);
        const end = request.maxEntries > 0 ? Math.min(offset + request.maxEntries, volumes.length) : volumes.length;
        return create(ListVolumesResponseSchema, {
          entries: volumes.slice(offset, end).map(([volumeId, nodeIds]) => ({ volume: { volumeId }, status: { publishedNodeIds: [...nodeIds] } })),
          nextToken: end < volumes.length ? String(end) : "",
        });
      },
    });
  });
  return { client: new CsiClient(transport), requests, volumes };
}

interface VaOptions {
  readonly attached: boolean;
  readonly pv?: string;
  readonly inlineHandle?: string;
  /** Driver of the inline CSI source; default ours. */
  readonly inlineDriver?: string;
  readonly node?: string;
  readonly attacher?: string;
  readonly deleting?: boolean;
  readonly nodeIdAnnotation?: string;
}

function va(name: string, options: VaOptions): VolumeAttachment {
  return parseVolumeAttachment({
    metadata: {
      name,
      resourceVersion: "1",
      ...(options.deleting ? { deletionTimestamp: "2026-11-22T11:00:00Z", finalizers: [`external-attacher/ours-csi-test`] } : {}),
      ...(options.nodeIdAnnotation ? { annotations: { "csi.alpha.kubernetes.io/node-id": options.nodeIdAnnotation } } : {}),
    },
    spec: {
      attacher: options.attacher ?? driver,
      nodeName: options.node ?? "node-a",
      source: options.inlineHandle
        ? { inlineVolumeSpec: { csi: { driver: options.inlineDriver ?? driver, volumeHandle: options.inlineHandle } } }
        : { persistentVolumeName: options.pv ?? `pv-${name}` },
    },
    status: { attached: options.attached },
  });
}

function csiPv(name: string, volumeHandle: string): PersistentVolume {
  return parsePersistentVolume({ metadata: { name, resourceVersion: "1" }, spec: { csi: { driver, volumeHandle } } });
}

const ourFinalizer = "external-attacher/ours-csi-test";

/** ourPv is a PV of our driver that carries our finalizer: a VA of ours named it once. */
function ourPv(name: string, volumeHandle: string, options: { readonly deleting?: boolean } = {}): PersistentVolume {
  return parsePersistentVolume({
    metadata: { name, resourceVersion: "1", finalizers: [ourFinalizer], ...(options.deleting ? { deletionTimestamp: "2026-11-22T11:00:00Z" } : {}) },
    spec: { csi: { driver, volumeHandle } },
  });
}

function csiNode(name: string, nodeId: string, driverName = driver): CsiNode {
  return parseCsiNode({ metadata: { name, resourceVersion: "1" }, spec: { drivers: [{ name: driverName, nodeID: nodeId }] } });
}

function storeOf<T extends KubeObject>(objects: readonly T[]): Store<T> {
  const store = new Store<T>();
  for (const object of objects) store.upsert(object);
  return store;
}

interface Ground {
  /** Our driver; default "ours.csi.test". */
  readonly driverName?: string;
  readonly vas: readonly VolumeAttachment[];
  readonly pvs?: readonly PersistentVolume[];
  readonly csiNodes?: readonly CsiNode[];
  readonly driver: ReturnType<typeof fakeDriver>;
  readonly maxEntries?: number;
  readonly clock?: FakeClock;
  /** Names a worker holds or that wait in the queue besides those the reconciler adds. */
  readonly busy?: readonly string[];
  /** Our writes the cache does not show yet, by VA name. */
  readonly unobservedWrites?: Readonly<Record<string, string>>;
  /** PVs this replica inherited (carried our finalizer when it started leading). */
  readonly inherited?: readonly string[];
}

/** reconcilerOn builds a Reconciler over hand-filled stores; `outcome` reads what it asked for. */
function reconcilerOn(ground: Ground) {
  const forcedSyncs = new ForcedSyncs();
  const enqueued: string[] = [];
  const pvsEnqueued: string[] = [];
  const inherited = new InheritedPublications();
  const pvs = storeOf(ground.pvs ?? []);
  inherited.inherit([...pvs.list()].filter((pv) => ground.inherited?.includes(pv.metadata.name)), driver);
  const lines: string[] = [];
  const vas = storeOf(ground.vas);
  // Our writes answered with a version the cache cannot order stay unobserved in the store.
  for (const [name, resourceVersion] of Object.entries(ground.unobservedWrites ?? {})) {
    const cached = vas.get(name);
    if (cached) vas.applyOwnWrite({ ...cached, metadata: { ...cached.metadata, resourceVersion } });
  }
  const reconciler = new Reconciler({
    driverName: ground.driverName ?? driver,
    lister: ground.driver.client,
    vas,
    pvs,
    csiNodes: storeOf(ground.csiNodes ?? [csiNode("node-a", "id-a"), csiNode("node-b", "id-b")]),
    forcedSyncs,
    // Nothing takes names from this queue: what it was given stays queued.
    vaQueue: { add: (name) => void enqueued.push(name), queuedOrProcessing: (name) => enqueued.includes(name) || (ground.busy ?? []).includes(name) },
    inherited,
    pvQueue: { add: (name) => void pvsEnqueued.push(name) },
    periodMs: 60_000,
    maxEntries: ground.maxEntries ?? 0,
    timeoutMs: 15_000,
    log: new Logger({ verbosity: 5, sink: (line) => lines.push(line) }),
    ...(ground.clock ? { clock: ground.clock } : {}),
  });
  // Every name ever enqueued, and which of all VA names are marked (take consumes the mark).
  const outcome = () => ({
    enqueued: [...enqueued].sort(),
    marked: ground.vas.map((v) => v.metadata.name).filter((name) => forcedSyncs.take(name)).sort(),
  });
  /** What the pass handed the PV sync: PVs queued, each PV's orphan marks, the PVs still inherited. */
  const pvOutcome = () => ({
    pvsEnqueued: [...pvsEnqueued].sort(),
    orphans: Object.fromEntries((ground.pvs ?? []).flatMap((pv) => {
      const marks = inherited.orphansOf(pv.metadata.name);
      return marks === undefined ? [] : [[pv.metadata.name, marks]];
    })),
    inherited: inherited.inheritedNames().sort(),
  });
  return { reconciler, outcome, pvOutcome, lines, enqueued, vas };
}

describe("reconciler", () => {
  it("compares each VA of a multi-attach volume with its own node, and a volume listed twice by its last entry", async () => {
    const csi = fakeDriver([
      ["vol-shared", ["id-a"]],
      ["vol-twice", ["id-a"]],
      ["vol-twice", []],
      // Volumes of no VA of ours (another cluster's, on a shared backend) are passed over.
      ...Array.from({ length: 50 }, (_, i): DriverVolume => [`vol-elsewhere-${i}`, ["id-a"]]),
    ]);
    const { reconciler, outcome } = reconcilerOn({
      driver: csi,
      maxEntries: 7,
      vas: [
        va("shared-a", { attached: true, pv: "pv-shared" }),
        va("shared-b", { attached: true, pv: "pv-shared", node: "node-b" }),
        va("twice", { attached: true }),
      ],
      pvs: [csiPv("pv-shared", "vol-shared"), csiPv("pv-twice", "vol-twice")],
    });
    await reconciler.reconcile();
    expect(outcome()).toEqual({ enqueued: ["shared-b", "twice"], marked: ["shared-b", "twice"] });
  });

  it("forces a sync of every VA whose attached status disagrees with the driver, in both directions, across ListVolumes pages", async () => {
    const csi = fakeDriver([
      ["vol-attached-ok", ["id-a"]],
      ["vol-lost", ["id-b"]],
      ["vol-deleting-published", ["id-a"]],
      ["vol-detached-ok", []],
      ["vol-annotated", ["id-gone"]],
      ["vol-foreign", []],
    ]);
    const { reconciler, outcome } = reconcilerOn({
      driver: csi,
      maxEntries: 2,
      vas: [
        va("attached-ok", { attached: true }),
        // Published to another node only: detached behind our back.
        va("lost", { attached: true }),
        // Not listed by the driver at all.
        va("vanished", { attached: true }),
        // Detached by us while being deleted, but the driver still has it.
        va("deleting-published", { attached: false, deleting: true }),
        va("detached-ok", { attached: false }),
        // The CSINode is gone: the node ID comes from the annotation, and it matches.
        va("annotated", { attached: true, node: "node-gone", nodeIdAnnotation: "id-gone" }),
        // Another driver's VA is none of our business.
        va("foreign", { attached: true, attacher: "other.csi.test" }),
      ],
      pvs: [
        csiPv("pv-attached-ok", "vol-attached-ok"),
        csiPv("pv-lost", "vol-lost"),
        csiPv("pv-vanished", "vol-vanished"),
        csiPv("pv-deleting-published", "vol-deleting-published"),
        csiPv("pv-detached-ok", "vol-detached-ok"),
        csiPv("pv-annotated", "vol-annotated"),
        csiPv("pv-foreign", "vol-foreign"),
      ],
    });
    await reconciler.reconcile();
    expect({ requests: csi.requests, ...outcome() }).toEqual({
      requests: [
        { maxEntries: 2, startingToken: "" },
        { maxEntries: 2, startingToken: "2" },
        { maxEntries: 2, startingToken: "4" },
      ],
      enqueued: ["deleting-published", "lost", "vanished"],
      marked: ["deleting-published", "lost", "vanished"],
    });
  });

  it("leaves a VA whose name is queued or held by a worker to that worker, in both directions, and says so only at -v=4", async () => {
    const csi = fakeDriver([
      ["vol-publishing", ["id-a"]],
      ["vol-unpublishing", []],
      ["vol-lost", []],
    ]);
    const { reconciler, outcome, lines } = reconcilerOn({
      driver: csi,
      // Published, attached: true not written yet; unpublished, finalizer removal not written yet.
      busy: ["publishing", "unpublishing"],
      vas: [va("publishing", { attached: false }), va("unpublishing", { attached: true, deleting: true }), va("lost", { attached: true })],
      pvs: [csiPv("pv-publishing", "vol-publishing"), csiPv("pv-unpublishing", "vol-unpublishing"), csiPv("pv-lost", "vol-lost")],
    });
    await reconciler.reconcile();
    const named = (prefix: string) => lines.filter((line) => line.startsWith(prefix)).map((line) => /VolumeAttachment="([^"]+)"/.exec(line)?.[1]).filter((name) => name !== undefined);
    expect({ ...outcome(), errors: named("E"), inFlight: named("I").sort() }).toEqual({
      enqueued: ["lost"],
      marked: ["lost"],
      errors: ["lost"],
      inFlight: ["publishing", "unpublishing"],
    });
  });

  it("leaves a VA that changed while the driver was being listed to the next pass", async () => {
    let duringListing = () => {};
    const csi = fakeDriver([["vol-racing", ["id-a"]]], 0, () => duringListing());
    const before = va("racing", { attached: false });
    const { reconciler, outcome, vas } = reconcilerOn({ driver: csi, vas: [before], pvs: [csiPv("pv-racing", "vol-racing")] });
    // A worker attached it after the pass took the VAs and before the driver answered.
    const attached = va("racing", { attached: true });
    duringListing = () => vas.upsert({ ...attached, metadata: { ...attached.metadata, resourceVersion: "2" } });
    await reconciler.reconcile();
    expect(outcome()).toEqual({ enqueued: [], marked: [] });
  });

  it("leaves a VA whose cache entry does not show our last write yet, and forces one whose entry does", async () => {
    const csi = fakeDriver([
      ["vol-written", ["id-a"]],
      ["vol-shown", ["id-a"]],
    ]);
    const { reconciler, outcome } = reconcilerOn({
      driver: csi,
      // The cached VAs are at version "1".
      unobservedWrites: { written: "x2", shown: "1" },
      vas: [va("written", { attached: false }), va("shown", { attached: false })],
      pvs: [csiPv("pv-written", "vol-written"), csiPv("pv-shown", "vol-shown")],
    });
    await reconciler.reconcile();
    expect(outcome()).toEqual({ enqueued: ["shown"], marked: ["shown"] });
  });

  it("leaves every VA of the first list to the workers on the pass right after the caches sync, and forces the one still out of step once its sync is done", async () => {
    const vas = new Store<VolumeAttachment>();
    const vaQueue = new WorkQueue<string>({ name: "csi-attacher-va" });
    const idle: Handler = {
      syncVolumeAttachment: async () => undefined,
      start: () => {},
      syncPersistentVolume: async () => {},
    };
    const pvs = storeOf([csiPv("pv-restarted-ok", "vol-restarted-ok"), csiPv("pv-restarted-lost", "vol-restarted-lost")]);
    // The controller's handlers queue every VA of the first list, as in main.
    new AttachController({ driverName: driver, handler: idle, vas, pvs, vaQueue, pvQueue: new WorkQueue<string>({ name: "csi-attacher-pv" }), log: new Logger({ sink: () => {} }) });
    const forcedSyncs = new ForcedSyncs();
    const reconciler = new Reconciler({
      driverName: driver,
      // The driver lost one publish while the attacher was down.
      lister: fakeDriver([["vol-restarted-ok", ["id-a"]], ["vol-restarted-lost", []]]).client,
      vas,
      pvs,
      csiNodes: storeOf([csiNode("node-a", "id-a")]),
      forcedSyncs,
      vaQueue,
      inherited: new InheritedPublications(),
      pvQueue: { add: () => {} },
      periodMs: 60_000,
      maxEntries: 0,
      timeoutMs: 15_000,
      log: new Logger({ sink: () => {} }),
    });
    const firstList = vas.startReplace();
    for (const listed of [va("restarted-ok", { attached: true }), va("restarted-lost", { attached: true })]) firstList.add(listed);
    firstList.finish();
    const marked = () => ["restarted-ok", "restarted-lost"].filter((name) => forcedSyncs.take(name));
    await reconciler.reconcile();
    const firstPass = { marked: marked(), queued: vaQueue.len() };
    // A worker syncs both; with attached: true and no forced sync, that writes nothing.
    for (let i = 0; i < 2; i++) {
      const next = await vaQueue.get();
      if (!next.shutdown) vaQueue.done(next.item);
    }
    await reconciler.reconcile();
    expect({ firstPass, secondPass: { marked: marked(), queued: vaQueue.len() } }).toEqual({
      firstPass: { marked: [], queued: 2 },
      secondPass: { marked: ["restarted-lost"], queued: 1 },
    });
  });

  it("compares migrated volumes by their translated handles, repaired with the node ID as the driver lists them", async () => {
    const gce = "pd.csi.storage.gke.io";
    const nodeId = "projects/proj-1/zones/us-east1-a/instances/node-a";
    const disk = (name: string) => `projects/proj-1/zones/us-east1-a/disks/${name}`;
    const inTreePv = (name: string, pdName: string) =>
      parsePersistentVolume({
        metadata: { name, resourceVersion: "1", labels: { "topology.kubernetes.io/zone": "us-east1-a" } },
        spec: { gcePersistentDisk: { pdName } },
      });
    const csi = fakeDriver([
      [disk("disk-1"), [nodeId]],
      [disk("disk-2"), []],
      [disk("disk-3"), [nodeId]],
    ]);
    const { reconciler, outcome } = reconcilerOn({
      driver: csi,
      driverName: gce,
      csiNodes: [csiNode("node-a", nodeId, gce)],
      vas: [
        va("in-tree-ok", { attached: true, attacher: gce }),
        va("in-tree-lost", { attached: true, attacher: gce }),
        // The A/D controller's inline spec leaves the project to the node: projects/UNSPECIFIED/...
        va("inline-published", { attached: false, attacher: gce, inlineDriver: gce, inlineHandle: "projects/UNSPECIFIED/zones/us-east1-a/disks/disk-3" }),
      ],
      pvs: [inTreePv("pv-in-tree-ok", "disk-1"), inTreePv("pv-in-tree-lost", "disk-2")],
    });
    await reconciler.reconcile();
    expect(outcome()).toEqual({ enqueued: ["in-tree-lost", "inline-published"], marked: ["in-tree-lost", "inline-published"] });
  });

  it("leaves max_entries to the driver when --max-entries is 0", async () => {
    const csi = fakeDriver([["vol-a", ["id-a"]], ["vol-b", []], ["vol-c", []]]);
    const { reconciler } = reconcilerOn({ driver: csi, vas: [] });
    await reconciler.reconcile();
    expect(csi.requests).toEqual([{ maxEntries: 0, startingToken: "" }]);
  });

  it("skips VAs whose node ID or volume handle cannot be resolved, with upstream's log words", async () => {
    // Every one of these would be a mismatch if it were compared: nothing is published.
    const { reconciler, outcome, lines } = reconcilerOn({
      driver: fakeDriver([]),
      vas: [
        va("no-node", { attached: true, node: "node-unknown" }),
        va("no-pv", { attached: true }),
        // An in-tree source CSI migration cannot translate.
        va("untranslatable", { attached: true }),
        // Neither CSI nor in-tree.
        va("no-source", { attached: true }),
        // Upstream repairs every inline handle, which fails for a driver that replaces no in-tree plugin.
        va("inline", { attached: true, inlineHandle: "vol-inline" }),
      ],
      pvs: [
        parsePersistentVolume({ metadata: { name: "pv-untranslatable" }, spec: { gcePersistentDisk: { fsType: "ext4" } } }),
        parsePersistentVolume({ metadata: { name: "pv-no-source" }, spec: {} }),
      ],
    });
    await reconciler.reconcile();
    const skipped = lines.filter((line) => line.startsWith("E")).map((line) => /"([^"]+)"/.exec(line)?.[1]);
    expect({ ...outcome(), skipped }).toEqual({
      enqueued: [],
      marked: [],
      skipped: ["Failed to find node ID err", "Failed to get PV Spec", "Failed to get PV Spec", "Failed to get CSI Source", "Failed to repair volume handle for driver"],
    });
  });

  it("forces nothing when ListVolumes fails, and tries again on the next pass", async () => {
    const csi = fakeDriver([], 1);
    const { reconciler, outcome, lines } = reconcilerOn({ driver: csi, vas: [va("lost", { attached: true })], pvs: [csiPv("pv-lost", "vol-lost")] });
    await reconciler.reconcile();
    const afterFailure = { ...outcome(), logged: lines.filter((line) => line.includes('"Failed to reconcile VolumeAttachment"')).map((line) => /err="(.*)"$/.exec(line)?.[1]) };
    await reconciler.reconcile();
    expect({ afterFailure, afterRetry: outcome() }).toEqual({
      afterFailure: { enqueued: [], marked: [], logged: ["failed to ListVolumes: failed to list volumes: rpc error: code = Unavailable desc = backend down"] },
      afterRetry: { enqueued: ["lost"], marked: ["lost"] },
    });
  });

  it("reconciles at once, then one period after each pass, until stopped", async () => {
    const clock = new FakeClock();
    const csi = fakeDriver([]);
    const { reconciler } = reconcilerOn({ driver: csi, vas: [], clock });
    const stop = new AbortController();
    const running = reconciler.run(stop.signal);
    await settle();
    const passes = [csi.requests.length];
    clock.step(59_999);
    await settle();
    passes.push(csi.requests.length);
    clock.step(1);
    await settle();
    passes.push(csi.requests.length);
    stop.abort();
    await running;
    clock.step(60_000);
    await settle();
    passes.push(csi.requests.length);
    expect(passes).toEqual([1, 1, 2, 2]);
  });

  it("cuts a listing in flight short when stopped, without reporting a failure", async () => {
    let arrived: () => void = () => {};
    const listing = new Promise<void>((resolve) => (arrived = resolve));
    // A driver that answers only when its caller gives up.
    const transport = createRouterTransport(({ service }) => {
      service(Controller, {
        listVolumes: (_request, context) =>
          new Promise((_resolve, reject) => {
            arrived();
            context.signal.addEventListener("abort", () => reject(new ConnectError("gave up", Code.Canceled)));
          }),
      });
    });
    const { reconciler, lines } = reconcilerOn({ driver: { client: new CsiClient(transport), requests: [], volumes: [] }, vas: [] });
    const stop = new AbortController();
    const running = reconciler.run(stop.signal);
    await listing;
    stop.abort();
    await running;
    expect(lines.filter((line) => line.startsWith("E"))).toEqual([]);
  });
});

describe("reconciler: publishes that no VA of ours names (kubernetes#77988 while no replica watched)", () => {
  it("marks a volume of a PV of ours listed on nodes that no VA of ours names, and queues the PV; leaves every other volume alone", async () => {
    const csi = fakeDriver([
      // va-kept names id-a; id-b is left over from a VA that vanished.
      ["vol-kept", ["id-a", "id-b"]],
      // No VA at all any more.
      ["vol-orphan", ["id-a"]],
      // Never named by a PV of ours: another cluster's volume, or one we never attached (upstream's rule).
      ["vol-foreign", ["id-a"]],
      // A PV of our driver that never carried our finalizer: never attached by us.
      ["vol-never-ours", ["id-b"]],
      // A VA of ours names it on a node whose ID cannot be told: any node may be its.
      ["vol-unknown-node", ["id-a"]],
      // Published nowhere.
      ["vol-idle", []],
    ]);
    const { reconciler, outcome, pvOutcome } = reconcilerOn({
      driver: csi,
      vas: [va("va-kept", { attached: true, pv: "pv-kept" }), va("va-unknown", { attached: false, pv: "pv-unknown-node", node: "node-gone" })],
      pvs: [ourPv("pv-kept", "vol-kept"), ourPv("pv-orphan", "vol-orphan"), csiPv("pv-never-ours", "vol-never-ours"), ourPv("pv-unknown-node", "vol-unknown-node"), ourPv("pv-idle", "vol-idle")],
    });
    await reconciler.reconcile();
    expect({ ...outcome(), ...pvOutcome() }).toEqual({
      enqueued: [],
      marked: [],
      pvsEnqueued: ["pv-kept", "pv-orphan"],
      orphans: { "pv-kept": ["id-b"], "pv-orphan": ["id-a"] },
      inherited: [],
    });
  });

  it("clears the PVs this replica inherited once a listing completed, queuing those that wait for it to lose our finalizer; a failed listing clears nothing", async () => {
    const pvs = [ourPv("pv-deleting", "vol-deleting", { deleting: true }), ourPv("pv-live", "vol-live"), ourPv("pv-deleting-published", "vol-deleting-published", { deleting: true })];
    const inheritedAll = pvs.map((pv) => pv.metadata.name);
    const failing = reconcilerOn({ driver: fakeDriver([], 1), vas: [], pvs, inherited: inheritedAll });
    await failing.reconciler.reconcile();
    const { reconciler, pvOutcome } = reconcilerOn({ driver: fakeDriver([["vol-deleting-published", ["id-b"]]]), vas: [], pvs, inherited: inheritedAll });
    await reconciler.reconcile();
    expect({ afterFailure: failing.pvOutcome(), afterListing: pvOutcome() }).toEqual({
      afterFailure: { pvsEnqueued: [], orphans: {}, inherited: ["pv-deleting", "pv-deleting-published", "pv-live"] },
      afterListing: { pvsEnqueued: ["pv-deleting", "pv-deleting-published"], orphans: { "pv-deleting-published": ["id-b"] }, inherited: [] },
    });
  });
});
