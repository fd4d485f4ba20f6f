/**
 * `bun run bench/ab.ts --a PATH --b PATH`: an interleaved A/B of two builds
 * of ours (or ours and the floor's bare client, or the same binary under
 * two environments through a wrapper script) on one test ground, for
 * deciding whether a lever stays. The full bench compares ours with Go
 * once per scenario and round; a lever worth 5-10 % drowns in that noise
 * (one cold cycle of 200 VAs varies by +-30 % pair to pair on this
 * machine). Here each process runs several cycles of N VAs (create, all
 * attached, delete, all gone): the first cycle carries start-up and the
 * JIT's warm-up, the later ones are the warm cycle a long-running attacher
 * pays, timed by the scheduler's count of the process's CPU
 * (/proc/PID/task/TID/schedstat, to the nanosecond). Pairs alternate
 * their order, A B then B A (an ABBA design: whatever the process that
 * goes second inherits from the first, a warmer page cache or a ground
 * still settling, falls on each side equally), and each figure is
 * reported as the median of A, of B,
 * and of the per-pair ratios A/B with their range.
 *
 * Both binaries run with the flags of the bench's throughput cells
 * (--worker-threads, --kube-api-qps, --kube-api-burst, -v=2), against the
 * fault driver with no latency, and each process starts with the PVs
 * released from the attacher finalizer, so each first cycle pays the same
 * writes. `--pv-finalizers every` releases them again before each later
 * cycle too, so that every cycle adds them (an attacher's later cycles
 * otherwise send no PV patch, while the floor sends one every cycle);
 * `--pv-finalizers held` puts them on before each process instead, so that
 * no cycle adds them, the first one included.
 * `--foreign-pvs N` puts N PVs of another driver on the ground first,
 * which every start-up syncs (a shared cluster's); `--driver-latency MS`
 * has the driver answer each call that late; `--b-kind go` (or
 * `--a-kind go`) runs upstream's attacher on one side.
 *
 * Each process also says how many API requests each VA of its later cycles
 * cost, by kind (kube-apiserver's apiserver_request_total, less the
 * bench's own creates and deletes of VAs): what an attacher sends that the
 * CPU figures cannot show, a request answered 404 included.
 *
 *   bun run bench/ab.ts --a dist/csi-attacher --b /tmp/csi-attacher-main [--pairs 6] [--vas 200] [--cycles 4]
 *                       [--workers 10] [--qps 1000] [--burst 2000] [--foreign-pvs N] [--driver-latency MS]
 *                       [--pv-finalizers first|every|held] [--label NAME]
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { apiserverRequests, requestKey, type RequestTally } from "../test/ground/apiserver-request-count";
import { ensureComponents } from "../test/ground/components";
import { startAttacher, type AttacherKind, type RunningAttacher } from "./lib/attacher-under-test";
import { bulkConcurrency, createForeignPvs, prepareOwnPvs, setPvFinalizers, startBenchGround, type BenchGround } from "./lib/bench-ground";
import { readThreadCpuSeconds } from "./lib/proc-stats";
import { median } from "./lib/stats";
import { runVaCycle } from "./lib/va-cycle";
import { VaWatch } from "./lib/va-watch";

const { values: opts } = parseArgs({
  options: {
    a: { type: "string" },
    b: { type: "string" },
    "a-kind": { type: "string", default: "ours" },
    "b-kind": { type: "string", default: "ours" },
    pairs: { type: "string", default: "6" },
    vas: { type: "string", default: "200" },
    cycles: { type: "string", default: "4" },
    workers: { type: "string", default: "10" },
    qps: { type: "string", default: "1000" },
    burst: { type: "string", default: "2000" },
    "foreign-pvs": { type: "string", default: "0" },
    "driver-latency": { type: "string", default: "0" },
    "pv-finalizers": { type: "string", default: "first" },
    label: { type: "string", default: "ab" },
  },
});
if (opts.a === undefined || opts.b === undefined) {
  console.error("usage: bun run bench/ab.ts --a PATH --b PATH [--a-kind ours|go|floor] [--b-kind ours|go|floor] [--pairs N] [--vas N] [--cycles N] [--workers N] [--qps N] [--burst N] [--foreign-pvs N] [--driver-latency MS] [--pv-finalizers first|every|held] [--label NAME]");
  process.exit(2);
}
const kindOf = (name: string): AttacherKind => {
  if (name === "ours" || name === "floor" || name === "go") return name;
  throw new Error(`--a-kind and --b-kind take ours, go or floor (the line each says when ready), not ${JSON.stringify(name)}`);
};
const sides = { A: { kind: kindOf(opts["a-kind"]), path: resolve(opts.a) }, B: { kind: kindOf(opts["b-kind"]), path: resolve(opts.b) } } as const;
const pairs = Number(opts.pairs);
const vas = Number(opts.vas);
const cycles = Number(opts.cycles);
const foreignPvs = Number(opts["foreign-pvs"]);
if (![pairs, vas, cycles].every((n) => Number.isInteger(n) && n >= 1) || cycles < 2) throw new Error("--pairs and --vas must be whole numbers >= 1, --cycles >= 2 (the first cycle is the cold one)");
if (!Number.isInteger(foreignPvs) || foreignPvs < 0) throw new Error("--foreign-pvs must be a whole number >= 0");
const driverLatencyMs = Number(opts["driver-latency"]);
if (!Number.isInteger(driverLatencyMs) || driverLatencyMs < 0) throw new Error("--driver-latency must be a whole number of ms >= 0");
const pvFinalizers = opts["pv-finalizers"];
if (pvFinalizers !== "first" && pvFinalizers !== "every" && pvFinalizers !== "held") throw new Error(`--pv-finalizers takes first, every or held, not ${JSON.stringify(pvFinalizers)}`);
const pvFinalizersEveryCycle = pvFinalizers === "every";

/** One process's figures: ms and CPU seconds from exec to ready, CPU per 1,000 VAs of its first cycle and the median of the later ones, and peak RSS. */
interface ProcessFigures {
  readonly readyMs: number;
  readonly cpuToReadyS: number;
  readonly coldCpuPer1000: number;
  readonly warmCpuPer1000: number;
  readonly warmSecondsPerCycle: number;
  readonly peakRssMiB: number;
  /** The largest RssAnon sampled (every 200 ms): the peak's private part, the heap's and the allocator's. */
  readonly peakAnonMiB: number;
  /** VmRSS and RssAnon at ready: what start-up and the caches' sync left resident before any cycle. */
  readonly readyRssMiB: number;
  readonly readyAnonMiB: number;
  /** The attacher's API requests per VA in the later cycles (median of those cycles), of every kind. */
  readonly warmApiRequestsPerVa: number;
}

/** What the bench itself sends in a cycle, left out of an attacher's requests: it creates and deletes the VAs. */
const benchOwnRequests = new Set(["POST volumeattachments 201", "DELETE volumeattachments 200"]);

/** attacherRequestsPerVa: the requests for resources kube-apiserver answered between two readings, per VA, by kind, less the bench's own. */
function attacherRequestsPerVa(before: readonly RequestTally[], after: readonly RequestTally[]): Map<string, number> {
  const counted = new Map(before.map((tally) => [requestKey(tally), tally.count]));
  const perVa = new Map<string, number>();
  for (const tally of after) {
    const key = requestKey(tally);
    const sent = tally.count - (counted.get(key) ?? 0);
    // A path that names no resource (kube-apiserver's own /openapi/v3) is no attacher's.
    if (sent > 0 && tally.resource !== "" && !benchOwnRequests.has(key)) perVa.set(key, sent / vas);
  }
  return perVa;
}

async function runProcess(ground: BenchGround, watch: VaWatch, side: "A" | "B", index: number, ownPvs: { count: number }): Promise<ProcessFigures> {
  const binary = sides[side];
  await prepareOwnPvs(ground, vas, ownPvs);
  await setPvFinalizers(ground.admin, { held: pvFinalizers === "held", namePrefix: "bench-pv-", concurrency: bulkConcurrency });
  const attacher = startAttacher(binary, {
    kubeconfig: ground.cluster.kubeconfigPath,
    csiSocket: ground.csiSocket,
    logDir: ground.logDir,
    logName: `ab-${side}-${index}`,
    args: [`--worker-threads=${opts.workers}`, `--kube-api-qps=${opts.qps}`, `--kube-api-burst=${opts.burst}`, "-v=2"],
  });
  try {
    const readyMs = await attacher.waitReady();
    const cpuToReadyS = cpuSeconds(attacher);
    // One reading of /proc for both; a process gone right after ready stops the A/B (sampleNow).
    const atReady = attacher.sampleNow();
    const readyRssMiB = atReady.rssBytes / 1048576;
    const readyAnonMiB = atReady.anonBytes / 1048576;
    const cpu: number[] = [];
    const seconds: number[] = [];
    const requests: number[] = [];
    for (let cycle = 0; cycle < cycles; cycle++) {
      if (pvFinalizersEveryCycle && cycle > 0) {
        await setPvFinalizers(ground.admin, { held: false, namePrefix: "bench-pv-", concurrency: bulkConcurrency });
        // The attacher handles the PVs' update events before the cycle's CPU is read.
        await Bun.sleep(2000);
      }
      const requestsBefore = await apiserverRequests(ground.cluster);
      const before = cpuSeconds(attacher);
      const started = performance.now();
      await runVaCycle(ground, watch, attacher, `ab-${side.toLowerCase()}${index}-c${cycle}`, vas);
      cpu.push(((cpuSeconds(attacher) - before) * 1000) / vas);
      seconds.push((performance.now() - started) / 1000);
      // Read a moment after the last VA is gone: upstream sends a status
      // patch right after the finalizer patch that deleted the VA.
      await Bun.sleep(500);
      const perVa = attacherRequestsPerVa(requestsBefore, await apiserverRequests(ground.cluster));
      if (cycle > 0) {
        requests.push([...perVa.values()].reduce((sum, n) => sum + n, 0));
        console.log(`[ab] ${side}${index} cycle ${cycle}: API requests per VA: ${[...perVa].map(([key, n]) => `${key} ${n.toFixed(2)}`).join(", ")}`);
      }
    }
    return {
      readyMs,
      cpuToReadyS,
      coldCpuPer1000: cpu[0] ?? Number.NaN,
      warmCpuPer1000: median(cpu.slice(1)),
      warmSecondsPerCycle: median(seconds.slice(1)),
      peakRssMiB: attacher.hwmBytes() / 1048576,
      // The list holds at least the reading at ready.
      peakAnonMiB: attacher.rss.reduce((peak, sample) => Math.max(peak, sample.anonBytes), 0) / 1048576,
      readyRssMiB,
      readyAnonMiB,
      warmApiRequestsPerVa: median(requests),
    };
  } finally {
    await attacher.stop();
  }
}

/** cpuSeconds is the attacher's CPU time to the nanosecond: clock ticks of 10 ms would be 2 % of a cycle. */
function cpuSeconds(attacher: RunningAttacher): number {
  return readThreadCpuSeconds(attacher.pid) ?? Number.NaN;
}

await ensureComponents();
const ground = await startBenchGround("fake", driverLatencyMs, "");
if (foreignPvs > 0) await createForeignPvs(ground.admin, 0, foreignPvs);
const watch = await VaWatch.start(ground.cluster);
const ownPvs = { count: 0 };
const results: { A: ProcessFigures[]; B: ProcessFigures[] } = { A: [], B: [] };
try {
  for (let pair = 1; pair <= pairs; pair++) {
    // Odd pairs run A first, even pairs B first.
    const order = pair % 2 === 1 ? (["A", "B"] as const) : (["B", "A"] as const);
    for (const side of order) {
      const figures = await runProcess(ground, watch, side, pair, ownPvs);
      results[side].push(figures);
      console.log(`[ab] pair ${pair} ${side}: ${Object.entries(figures).map(([k, v]) => `${k}=${v.toFixed(3)}`).join(" ")}`);
    }
  }
} finally {
  await watch.stop();
  await ground.stop();
}

const keys = Object.keys(results.A[0] ?? {}) as (keyof ProcessFigures)[];
const lines = [
  `A/B ${opts.label}: A=${sides.A.path} (${sides.A.kind}), B=${sides.B.path} (${sides.B.kind}); ${pairs} pairs, ${vas} VAs x ${cycles} cycles a process, --worker-threads=${opts.workers} --kube-api-qps=${opts.qps} --kube-api-burst=${opts.burst}${foreignPvs > 0 ? `; ${foreignPvs} PVs of another driver on the ground` : ""}${driverLatencyMs > 0 ? `; the driver answers in ${driverLatencyMs} ms` : ""}${pvFinalizersEveryCycle ? "; PV finalizers released before every cycle" : ""}${pvFinalizers === "held" ? "; PV finalizers on before each process" : ""}`,
  "",
  "| figure | A (median) | B (median) | A/B (median of pairs) | A/B range |",
  "|---|---:|---:|---:|---|",
];
for (const key of keys) {
  const a = results.A.map((f) => f[key]);
  const b = results.B.map((f) => f[key]);
  const ratios = a.map((x, i) => x / (b[i] ?? Number.NaN));
  lines.push(`| ${key} | ${median(a).toFixed(3)} | ${median(b).toFixed(3)} | ${median(ratios).toFixed(3)} | ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)} |`);
}
const text = lines.join("\n");
console.log(`\n${text}`);
const dir = join(import.meta.dir, "results", "scratch");
mkdirSync(dir, { recursive: true });
// The full bench's stamp: 2026-11-27T1656.
const stamp = new Date().toISOString().slice(0, 16).replace(":", "");
writeFileSync(join(dir, `${stamp}-ab-${opts.label}.md`), `${text}\n`);
writeFileSync(join(dir, `${stamp}-ab-${opts.label}.json`), `${JSON.stringify({ sides, pairs, vas, cycles, foreignPvs, driverLatencyMs, pvFinalizers, results }, null, 1)}\n`);
