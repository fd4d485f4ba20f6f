/**
 * patch-cost: the CPU one PV finalizer patch costs, sent ours' way and the
 * floor client's, to say how much of ours' cost above the floor is the
 * write itself (issue 36). On a test ground of its own, it patches N PVs
 * (10 at a time, as 10 workers would) four ways, in alternating order
 * round after round, and prints µs of this process's CPU per patch:
 *
 * - ours: `AttacherApi.patchPersistentVolume`, whose answer is parsed into
 *   the PV cache, as the attacher does;
 * - ours watched: the same, with the attacher's PV reflector watching, and
 *   the CPU counted until each patch's watch event is in the cache: the
 *   whole of what a PV finalizer write costs the attacher (the list that
 *   starts the watch is done before the count starts);
 * - `KubeClient.patch` alone: the answer through JSON.parse only;
 * - the floor's `apiFetch`, its answer through JSON.parse;
 * - the floor's `apiFetch`, its answer read as bytes (what the floor does).
 *
 * The finalizers are released before each way's turn, so each adds them.
 * Run it with the attacher's tiers for figures that compare with its:
 *
 *   BUN_JSC_useDFGJIT=0 BUN_JSC_useFTLJIT=0 BUN_GC_TIMER_DISABLE=1 bun run bench/patch-cost.ts [pvs=1000] [rounds=8]
 */
import { AttacherApi } from "../src/controller/attacher-api";
import { cachedObjectParsers } from "../src/controller/cached-objects";
import { finalizerName } from "../src/controller/driver-names";
import { addFinalizerPatch } from "../src/kube/finalizer-patches";
import { KubeClient } from "../src/kube/http-client";
import { loadKubeConnection } from "../src/kube/kubeconfig";
import type { PersistentVolume } from "../src/kube/objects/persistent-volume";
import type { VolumeAttachment } from "../src/kube/objects/volume-attachment";
import { persistentVolumesPath } from "../src/kube/objects/persistent-volume";
import { Reflector } from "../src/kube/reflector";
import { Store } from "../src/kube/store";
import { Logger } from "../src/log/logger";
import { carriesOurFinalizer } from "../src/controller/our-finalizer";
import { AdminClient } from "../test/ground/admin-client";
import { paths, persistentVolume } from "../test/ground/objects";
import { startTestCluster } from "../test/ground/test-cluster";
import { apiFetch, readApiTarget } from "./floor/floor-connections";
import { setPvFinalizers } from "./lib/bench-ground";
import { median } from "./lib/stats";

const pvCount = Number(process.argv[2] ?? 1000);
const rounds = Number(process.argv[3] ?? 8);
if (![pvCount, rounds].every((n) => Number.isInteger(n) && n >= 1)) throw new Error("usage: bun run bench/patch-cost.ts [pvs=1000] [rounds=8]");
const driver = "patch-cost.csi.test";
const prefix = "patch-cost-pv-";
const ways = ["ours", "ours-watched", "client", "floor-json", "floor-bytes"] as const;
type Way = (typeof ways)[number];
const wayWords: Record<Way, string> = {
  ours: "ours: AttacherApi.patchPersistentVolume, the answer parsed into the cache",
  "ours-watched": "ours, with the PV reflector watching, until each patch's watch event is in the cache",
  client: "KubeClient.patch alone, the answer through JSON.parse",
  "floor-json": "the floor's apiFetch, the answer through JSON.parse",
  "floor-bytes": "the floor's apiFetch, the answer read as bytes",
};

const cluster = await startTestCluster();
try {
  const admin = new AdminClient(cluster);
  const names = Array.from({ length: pvCount }, (_, i) => `${prefix}${i}`);
  for (let i = 0; i < names.length; i += 50) {
    await Promise.all(names.slice(i, i + 50).map((name) => admin.create(paths.persistentVolumes, persistentVolume(name, { driver, volumeHandle: `vol-${name}` }))));
  }
  const parse = cachedObjectParsers(driver);
  const pvs = new Store<PersistentVolume>();
  const client = new KubeClient({ connection: await loadKubeConnection({ kubeconfig: cluster.kubeconfigPath }) });
  const api = new AttacherApi(client, { vas: new Store<VolumeAttachment>(), pvs, parse });
  const target = await readApiTarget(cluster.kubeconfigPath);
  const finalizer = finalizerName(driver);

  // The watched way's own cache and API, which its reflector fills.
  const watchedPvs = new Store<PersistentVolume>();
  const watchedApi = new AttacherApi(client, { vas: new Store<VolumeAttachment>(), pvs: watchedPvs, parse });
  let watchedEvents = 0;
  // The watch events of this way's patches: each brings a PV of the prefix with our finalizer into the cache.
  watchedPvs.addHandlers({
    onUpdate: (_old, pv) => {
      if (carriesOurFinalizer(pv, driver) && pv.metadata.name.startsWith(prefix)) watchedEvents++;
    },
  });

  const patchOne = async (way: Way, name: string, body: string, operations: ReturnType<typeof addFinalizerPatch>): Promise<void> => {
    const path = `${paths.persistentVolumes}/${name}`;
    if (way === "ours") await api.patchPersistentVolume(name, operations);
    else if (way === "ours-watched") await watchedApi.patchPersistentVolume(name, operations);
    else if (way === "client") await client.patch(path, "json", operations);
    else {
      const answer = await apiFetch(target, path, { method: "PATCH", contentType: "application/json-patch+json", body });
      await (way === "floor-json" ? answer.json() : answer.arrayBuffer());
    }
  };

  /** One way's turn: every PV released and cached as the watch would have it, then patched; µs of CPU per patch. */
  const turn = async (way: Way): Promise<number> => {
    await setPvFinalizers(admin, { held: false, namePrefix: prefix, concurrency: 20 });
    for (const raw of (await admin.request<{ items: unknown[] }>("GET", paths.persistentVolumes)).items) pvs.upsert(parse.persistentVolume(raw));
    const watching = new AbortController();
    let reflecting: Promise<void> | undefined;
    if (way === "ours-watched") {
      const reflector = new Reflector({ client, log: new Logger({ verbosity: 0, sink: () => {} }), kind: "PersistentVolume", path: persistentVolumesPath, parse: parse.persistentVolume, store: watchedPvs });
      reflecting = reflector.run(watching.signal);
      await reflector.waitForSync();
      watchedEvents = 0;
    }
    Bun.gc(true);
    const queue = [...names];
    const cache = way === "ours-watched" ? watchedPvs : pvs;
    const before = process.cpuUsage();
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
          const pv = cache.get(name);
          if (pv === undefined) throw new Error(`PV ${name} is not cached`);
          const operations = addFinalizerPatch(pv.metadata.finalizers, finalizer);
          await patchOne(way, name, JSON.stringify(operations), operations);
        }
      }),
    );
    if (way === "ours-watched") {
      while (watchedEvents < pvCount) await Bun.sleep(1);
    }
    const used = process.cpuUsage(before);
    watching.abort();
    await reflecting;
    return (used.user + used.system) / pvCount;
  };

  // One turn of each first, so that no way pays the JIT's warm-up alone.
  for (const way of ways) await turn(way);
  const perPatch = new Map<Way, number[]>(ways.map((way) => [way, []]));
  for (let round = 0; round < rounds; round++) {
    for (const way of round % 2 === 0 ? ways : [...ways].reverse()) perPatch.get(way)?.push(await turn(way));
    console.log(`round ${round + 1}: ${ways.map((way) => `${way} ${perPatch.get(way)?.at(-1)?.toFixed(1)}`).join(", ")} µs`);
  }
  console.log(`\n${pvCount} PV finalizer patches, 10 at a time, ${rounds} rounds; µs of CPU per patch\n`);
  // Rounds drift with the machine: each way is also compared with the floor's, round by round.
  const floorBytes = perPatch.get("floor-bytes") ?? [];
  console.log("| way | median | range | / the floor's, median of rounds |\n|---|---:|---|---:|");
  for (const way of ways) {
    const values = perPatch.get(way) ?? [];
    const ratios = values.map((value, i) => value / (floorBytes[i] ?? Number.NaN));
    console.log(`| ${wayWords[way]} | ${median(values).toFixed(0)} | ${Math.min(...values).toFixed(0)}-${Math.max(...values).toFixed(0)} | ${median(ratios).toFixed(2)} |`);
  }
} finally {
  await cluster.stop();
}
