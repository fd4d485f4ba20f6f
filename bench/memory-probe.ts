/**
 * memory-probe runs the memory scenario (foreign PVs present, then own VAs
 * attached) for several builds of ours and for the Go attacher in one run,
 * A B C A B C on one ground, for work on memory; `bun run bench` stays the
 * report of record. Options add what the scenario cannot tell apart:
 *
 *   --second   a second batch of VAs after the first is detached: what more
 *              VAs cost once code and heap have grown to their working size
 *   --smaps    the largest anonymous mappings (/proc/<pid>/smaps)
 *   --late     RssAnon 10, 20 and 30 s after the attaches
 *   --heap     ours with a heap probe (full GC, then bun:jsc heapStats) on an
 *              empty cluster, with the foreign PVs, after the attaches, after
 *              the detaches and after a second batch: live heap bytes per
 *              foreign PV and per own VA. From source with --preload by
 *              default; --heap-bin takes binaries built with the probe in
 *              (main() importing test/ground/heap-probe-preload.ts).
 *
 *   bun run bench/memory-probe.ts --foreign-pvs 10000 --own-vas 1000 --rounds 3 \
 *     --bin before=/tmp/before --bin after=dist/csi-attacher --go --second
 */
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ensureComponents } from "../test/ground/components";
import type { AttacherBinary, RunningAttacher } from "./lib/attacher-under-test";
import { BenchContext, round3, settleRss } from "./lib/bench-context";
import { createForeignPvs, createVas, prepareOwnPvs, startBenchGround } from "./lib/bench-ground";
import { buildGoAttacher } from "./lib/go-attacher-build";
import { writeHeapProbeLauncher } from "../test/ground/heap-probe-launcher";
import { median } from "./lib/stats";
import { VaWatch } from "./lib/va-watch";

const { values: opts } = parseArgs({
  options: {
    "foreign-pvs": { type: "string", default: "10000" },
    "own-vas": { type: "string", default: "1000" },
    rounds: { type: "string", default: "2" },
    workers: { type: "string", default: "100" },
    bin: { type: "string", multiple: true, default: [] },
    go: { type: "boolean", default: false },
    second: { type: "boolean", default: false },
    smaps: { type: "boolean", default: false },
    late: { type: "boolean", default: false },
    heap: { type: "boolean", default: false },
    "heap-bin": { type: "string", multiple: true, default: [] },
  },
  strict: true,
});
const foreignPvs = wholeNumber("--foreign-pvs", opts["foreign-pvs"]);
const ownVas = wholeNumber("--own-vas", opts["own-vas"]);
const rounds = wholeNumber("--rounds", opts.rounds);
const limits = { workers: wholeNumber("--workers", opts.workers), qps: 1000, burst: 2000 };

function wholeNumber(flag: string, text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${flag} must be a whole number, not ${JSON.stringify(text)}`);
  return n;
}

/** Entry is one attacher under test: `--bin name=path[@workers]`, or the Go build. */
interface Entry {
  readonly name: string;
  readonly binary: AttacherBinary;
  readonly workers: number;
}
const entries: Entry[] = opts.bin.map((spec) => {
  const match = /^([^=]+)=([^@]+)(?:@(\d+))?$/.exec(spec);
  const [, name, path, workers] = match ?? [];
  if (name === undefined || path === undefined || !existsSync(path)) throw new Error(`--bin ${spec}: want name=existing-path[@workers]`);
  return { name, binary: { kind: "ours", path: resolve(path) }, workers: workers === undefined ? limits.workers : Number(workers) };
});
if (opts.go) entries.push({ name: "go", binary: { kind: "go", path: buildGoAttacher() }, workers: limits.workers });

/** HeapProbe is one line of test/ground/heap-probe-preload.ts. */
interface HeapProbe {
  readonly heapSize: number;
  readonly heapCapacity: number;
  readonly objectCount: number;
  readonly rss: number;
  readonly anon: number;
  readonly types: [string, number][];
}

await ensureComponents();
const ground = await startBenchGround("fake", 0, "");
const watch = await VaWatch.start(ground.cluster);
const ctx = new BenchContext(ground, watch, 2);
const mib = (bytes: number) => round3(bytes / 1048576);
let batch = 0;

/** attachBatch creates `ownVas` VAs and waits until all are attached; returns their names. */
async function attachBatch(label: string, attacher: RunningAttacher): Promise<string[]> {
  const names = await createVas(ground.admin, `${label}-${batch++}`, ownVas);
  await ctx.waitFor(`${label}: all attached`, () => watch.countAttached(names) === names.length, () => `${label} ${watch.countAttached(names)}/${names.length}`, 600_000, [attacher.process]);
  return names;
}

/** heapRun runs ours with the heap probe; returns the probe's lines: ready, then (with `attach`) attached, detached, attached again. */
async function heapRun(label: string, attach: boolean, heapBin: string | undefined): Promise<HeapProbe[]> {
  const out = join(tmpdir(), `heap-probe-${process.pid}-${label}.jsonl`);
  rmSync(out, { force: true });
  const wrapper = join(tmpdir(), `heap-probe-${process.pid}-${label}.sh`);
  writeHeapProbeLauncher(wrapper, out, heapBin);
  const attacher = ctx.start({ kind: "ours", path: wrapper }, `heap-${label}`, limits);
  const lines = () => (existsSync(out) ? readFileSync(out, "utf8").split("\n").filter((line) => line !== "") : []);
  const probe = async (): Promise<HeapProbe> => {
    // Settle first: in-flight work would count as live.
    await Bun.sleep(2000);
    const before = lines().length;
    process.kill(attacher.pid, "SIGUSR2");
    await ctx.waitFor(`${label}: heap probe`, () => lines().length > before, () => `${label}: heap probe`, 60_000, [attacher.process]);
    return JSON.parse(lines()[before] ?? "null") as HeapProbe;
  };
  try {
    await attacher.waitReady(300_000);
    const results = [await probe()];
    if (!attach) return results;
    const names = await attachBatch(`heap-${label}`, attacher);
    results.push(await probe());
    await ctx.cleanUp(names, attacher, `heap-${label}`, 600_000);
    results.push(await probe());
    // The first batch also paid for code warming up (JIT, the first gRPC calls): the second shows what VAs themselves cost.
    const again = await attachBatch(`heap-${label}`, attacher);
    results.push(await probe());
    await ctx.cleanUp(again, attacher, `heap-${label}`, 600_000);
    return results;
  } finally {
    await attacher.stop();
  }
}

function reportHeap(bin: string, empty: HeapProbe, [withForeign, attached, detached, attachedAgain]: HeapProbe[]): void {
  if (!withForeign || !attached || !detached || !attachedAgain) return;
  const perObject = (from: HeapProbe, to: HeapProbe, count: number) => `${Math.round((to.heapSize - from.heapSize) / count)} B (${round3((to.objectCount - from.objectCount) / count)} cells)`;
  const counts = new Map(detached.types);
  const cellGrowth = attachedAgain.types.map(([type, n]) => `${type}=${round3((n - (counts.get(type) ?? 0)) / ownVas)}`).join(" ");
  const memory = (p: HeapProbe) => `heap ${mib(p.heapSize)}/${mib(p.heapCapacity)} MiB, RSS ${mib(p.rss)}, RssAnon ${mib(p.anon)}`;
  console.log(
    [
      `heap probe of ${bin}:`,
      `  empty cluster:                     ${memory(empty)}`,
      `  with ${foreignPvs} foreign + ${ownVas} own PVs: ${memory(withForeign)}; ${perObject(empty, withForeign, foreignPvs + ownVas)} per PV`,
      `  ${ownVas} VAs attached:              ${memory(attached)}; ${perObject(withForeign, attached, ownVas)} per VA, warm-up included`,
      `  detached:                          ${memory(detached)}`,
      `  ${ownVas} VAs attached again:        ${memory(attachedAgain)}; ${perObject(detached, attachedAgain, ownVas)} per VA`,
      `  cells per VA of the second batch: ${cellGrowth}`,
    ].join("\n"),
  );
}

/** largestAnonMappings lists the mappings of `pid` holding the most anonymous memory. */
function largestAnonMappings(pid: number): string {
  const rows = readFileSync(`/proc/${pid}/smaps`, "utf8")
    .split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/)
    .map((block) => {
      const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(block)?.[1] ?? 0);
      return { head: block.split("\n")[0] ?? "", size: kib("Size"), anon: kib("Anonymous") };
    })
    .sort((a, b) => b.anon - a.anon);
  const total = rows.reduce((sum, row) => sum + row.anon, 0);
  return [`  Anonymous ${round3(total / 1024)} MiB in ${rows.length} mappings; largest:`, ...rows.slice(0, 6).map((row) => `  ${round3(row.anon / 1024)} MiB of ${round3(row.size / 1024)} MiB  ${row.head}`)].join("\n");
}

/** socketCount counts the sockets `pid` has open (API connections, the CSI socket, watches). */
function socketCount(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith("socket:");
    } catch (e: unknown) {
      // Closed between the listing and the read: not a socket any more.
      if ((e as { code?: unknown } | null)?.code === "ENOENT") return false;
      throw e;
    }
  }).length;
}

async function memoryRun(entry: Entry): Promise<Record<string, number>> {
  await prepareOwnPvs(ground, ownVas, ctx.ownPvs);
  const label = `probe-${entry.name}`;
  const attacher = ctx.start(entry.binary, `${label}-${batch}`, { ...limits, workers: entry.workers });
  try {
    const readyMs = Math.round(await attacher.waitReady(300_000));
    const rssForeign = await settleRss(attacher, 3000);
    const anonForeign = mib(attacher.anonBytes());
    if (opts.smaps) console.log(`smaps ${entry.name} with foreign PVs:\n${largestAnonMappings(attacher.pid)}`);
    watch.forget();
    const names = await attachBatch(label, attacher);
    const rssOwn = await settleRss(attacher, 3000);
    const anonOwn = mib(attacher.anonBytes());
    if (opts.smaps) console.log(`smaps ${entry.name} after attaches:\n${largestAnonMappings(attacher.pid)}`);
    const m: Record<string, number> = {
      readyMs,
      rssForeign,
      anonForeign,
      rssOwn,
      anonOwn,
      slopePer1000: round3(((rssOwn - rssForeign) * 1000) / ownVas),
      anonSlopePer1000: round3(((anonOwn - anonForeign) * 1000) / ownVas),
      sockets: socketCount(attacher.pid),
      cpu: attacher.cpuSeconds(),
    };
    if (opts.late) {
      for (const at of [10, 20, 30]) {
        await Bun.sleep(at === 10 ? 7000 : 10_000);
        m[`anon${at}s`] = mib(attacher.anonBytes());
      }
    }
    m["hwm"] = mib(attacher.hwmBytes());
    await ctx.cleanUp(names, attacher, entry.name, 600_000);
    if (opts.second) {
      const rssBefore = await settleRss(attacher, 3000);
      const again = await attachBatch(label, attacher);
      const rssAgain = await settleRss(attacher, 3000);
      m["secondSlopePer1000"] = round3(((rssAgain - rssBefore) * 1000) / ownVas);
      await ctx.cleanUp(again, attacher, entry.name, 600_000);
    }
    return m;
  } finally {
    await attacher.stop();
  }
}

try {
  const heapBins: (string | undefined)[] = opts["heap-bin"].length > 0 ? opts["heap-bin"] : [undefined];
  const empties: HeapProbe[] = [];
  if (opts.heap) for (const [i, bin] of heapBins.entries()) empties.push(...(await heapRun(`empty-${i}`, false, bin)));
  console.log(`creating ${foreignPvs} foreign PVs`);
  await createForeignPvs(ground.admin, 0, foreignPvs);
  await prepareOwnPvs(ground, ownVas, ctx.ownPvs);
  if (opts.heap) {
    for (const [i, bin] of heapBins.entries()) {
      const empty = empties[i];
      if (empty !== undefined) reportHeap(bin ?? "src/entry.ts", empty, await heapRun(`full-${i}`, true, bin));
    }
  }
  const table: { name: string; m: Record<string, number> }[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const entry of entries) {
      const m = await memoryRun(entry);
      table.push({ name: entry.name, m });
      console.log(`r${round} ${entry.name}: ${Object.entries(m).map(([k, v]) => `${k}=${v}`).join(" ")}`);
    }
  }
  for (const entry of entries) {
    const rows = table.filter((row) => row.name === entry.name);
    const keys = Object.keys(rows[0]?.m ?? {});
    console.log(`median ${entry.name}: ${keys.map((k) => `${k}=${round3(median(rows.map((row) => row.m[k] ?? 0)))}`).join(" ")}`);
  }
} finally {
  await watch.stop();
  await ground.stop();
}
