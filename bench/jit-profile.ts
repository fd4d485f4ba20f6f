/**
 * `bun run bench/jit-profile.ts`: a CPU profile of ours beside Bun's floor
 * client, module by module, from the scheduler's own clock. Each is built
 * from this tree for profiling (`scripts/build.ts --profiling`: names and
 * lines kept), run alone on the bench ground through cycles of N VAs as
 * bench/ab.ts runs them, under `perf record` with JavaScriptCore's JIT
 * dump on, and then every sample of the main thread is put where it ran:
 * the JIT's code for one of our functions (named, with its source module),
 * the runtime's own code (Bun, the interpreter, the collector, JSON.parse),
 * or the kernel. Start-up, the first cycle and the later ones are counted
 * apart.
 *
 * perf records call chains too (JSC's JIT code and Bun's keep frame
 * pointers), so that the runtime's and the kernel's samples, unnamed by
 * themselves, are also counted for the module of the nearest JavaScript
 * function on their stack: what our code costs, the native work it causes
 * included.
 *
 * Why not `--cpu-prof`: its sampler counts a thread blocked in a write as
 * busy (issue 36, twelfth session), so it says where time passes, not where
 * CPU goes. perf counts CPU, but names nothing in JIT code or in Bun's
 * stripped executable by itself.
 *
 * Needs `perf` (Debian's linux-perf) and the right to profile one's own
 * processes (root, or kernel.perf_event_paranoid <= 1). The runtime's own
 * share stays unnamed: Bun's executable carries no symbols.
 *
 *   bun run bench/jit-profile.ts [--vas 1000] [--cycles 2] [--workers 10] [--top 25] [--label NAME] [--keep] [--pv-finalizers first|held] [--floor-caches]
 *
 * --floor-caches runs the floor with its caches of PVs and CSINodes
 * (FLOOR_CACHES=1, bench/floor/floor-caches.ts): the same three API
 * requests per VA as ours instead of seven.
 *
 * --pv-finalizers held puts the attachers' finalizer on the PVs before each
 * process starts, so that its first cycle sends no PV patch (as bench/ab.ts's).
 *
 * --keep leaves the binaries, perf's data and the JIT dumps in the temporary
 * directory it names, for `perf report` by hand.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ensureComponents } from "../test/ground/components";
import { startAttacher, type AttacherKind } from "./lib/attacher-under-test";
import { bulkConcurrency, prepareOwnPvs, setPvFinalizers, startBenchGround, type BenchGround } from "./lib/bench-ground";
import { baselineCodeByModule, type ModuleCode } from "./lib/baseline-code-census";
import { BundledModules } from "./lib/bundled-modules";
import { JitCode, readJitDump } from "./lib/jit-dump";
import { monotonicSeconds } from "./lib/monotonic-clock";
import { attribute, parsePerfScript, type AttributedSample, type PerfSample } from "./lib/perf-samples";
import { runVaCycle } from "./lib/va-cycle";
import { VaWatch } from "./lib/va-watch";

const { values: opts } = parseArgs({
  options: {
    vas: { type: "string", default: "1000" },
    cycles: { type: "string", default: "2" },
    workers: { type: "string", default: "10" },
    top: { type: "string", default: "25" },
    label: { type: "string", default: "jit-profile" },
    keep: { type: "boolean", default: false },
    "pv-finalizers": { type: "string", default: "first" },
    "floor-caches": { type: "boolean", default: false },
  },
});
const vas = Number(opts.vas);
const cycles = Number(opts.cycles);
const top = Number(opts.top);
if (![vas, cycles, top].every((n) => Number.isInteger(n) && n >= 1)) throw new Error("--vas, --cycles and --top must be whole numbers >= 1");
const pvFinalizers = opts["pv-finalizers"];
if (pvFinalizers !== "first" && pvFinalizers !== "held") throw new Error(`--pv-finalizers takes first or held, not ${JSON.stringify(pvFinalizers)}`);
/** Samples a second: odd, so that it beats with no timer of the attachers'. */
const sampleHz = 1999;
/** The runtime options ours starts with (src/util/runtime-start-options.ts), set here so neither program executes itself again under perf. */
const runtimeOptions = ["BUN_JSC_useDFGJIT=0", "BUN_JSC_useFTLJIT=0", "BUN_GC_TIMER_DISABLE=1"];

const repoRoot = resolve(import.meta.dir, "..");
const work = mkdtempSync(join(tmpdir(), "jit-profile-"));

/** buildForProfiling compiles `entry` with names and lines kept. */
function buildForProfiling(entry: string, name: string): string {
  const outfile = join(work, name);
  const built = Bun.spawnSync([process.execPath, "run", "scripts/build.ts", "--profiling", `--entry=${entry}`], { cwd: repoRoot, env: { ...process.env, ATTACHER_OUTFILE: outfile }, stdout: "pipe", stderr: "pipe" });
  if (built.exitCode !== 0) throw new Error(`building ${entry} for profiling exited with ${built.exitCode}: ${built.stderr.toString()}`);
  return outfile;
}

/** Phase: what a stretch of the process's life was doing, in seconds of CLOCK_MONOTONIC (perf's clock under -k mono, and the JIT dump's). */
interface Phase {
  readonly name: string;
  readonly from: number;
  readonly to: number;
}

interface Profiled {
  readonly samples: readonly AttributedSample[];
  /** Samples of every thread by thread name, the main thread's included. */
  readonly threads: ReadonlyMap<string, number>;
  readonly phases: readonly Phase[];
  /** What the Baseline JIT compiled over the whole run, by module. */
  readonly code: readonly ModuleCode[];
}

async function profile(ground: BenchGround, watch: VaWatch, kind: AttacherKind, executable: string, ownPvs: { count: number }): Promise<Profiled> {
  await prepareOwnPvs(ground, vas, ownPvs);
  await setPvFinalizers(ground.admin, { held: pvFinalizers === "held", namePrefix: "bench-pv-", concurrency: bulkConcurrency });
  const dumpDir = join(work, `${kind}-jit`);
  const sourceDir = join(work, `${kind}-sources`);
  mkdirSync(dumpDir);
  mkdirSync(sourceDir);
  const data = join(work, `${kind}.perf`);
  // The source code dump is what makes JSC write each load's source line into the JIT dump.
  // A shell script sets the options and executes perf: started through env(1) with the same
  // options instead, JSC wrote its JIT dump but neither source dumps nor the dump's source lines.
  const underPerf = join(work, `${kind}-under-perf.sh`);
  const floorCaches = kind === "floor" && opts["floor-caches"] ? ["FLOOR_CACHES=1"] : [];
  const options = [...runtimeOptions, ...floorCaches, "BUN_JSC_useJITDump=1", `BUN_JSC_jitDumpDirectory=${dumpDir}`, "BUN_JSC_useSourceCodeDump=1", `BUN_JSC_sourceCodeDumpDirectory=${sourceDir}`];
  writeFileSync(underPerf, `#!/bin/sh\nexport ${options.join(" ")}\nexec perf record -q -g -k mono -F ${sampleHz} -o ${data} -- "$@"\n`, { mode: 0o755 });
  const wrapper = [underPerf];
  const phases: Phase[] = [];
  const now = monotonicSeconds;
  const started = now();
  const attacher = startAttacher({ kind, path: executable }, { kubeconfig: ground.cluster.kubeconfigPath, csiSocket: ground.csiSocket, logDir: ground.logDir, logName: `jit-profile-${kind}`, args: [`--worker-threads=${opts.workers}`, "--kube-api-qps=1000", "--kube-api-burst=2000", "-v=2"], wrapper });
  try {
    await attacher.waitReady();
    phases.push({ name: "start-up", from: started, to: now() });
    for (let cycle = 0; cycle < cycles; cycle++) {
      const from = now();
      await runVaCycle(ground, watch, attacher, `prof-${kind}-c${cycle}`, vas);
      phases.push({ name: cycle === 0 ? "first cycle" : "later cycles", from, to: now() });
    }
  } finally {
    // perf ends its child and writes the file on SIGTERM.
    await attacher.stop();
  }
  const dumps = readdirSync(dumpDir).filter((f) => f.startsWith("jit-") && f.endsWith(".dump"));
  if (dumps.length !== 1) throw new Error(`expected one JIT dump of ${kind} in ${dumpDir}, found ${dumps.length}`);
  const loads = readJitDump(readFileSync(join(dumpDir, dumps[0] as string)));
  const jit = new JitCode(loads);
  const script = Bun.spawnSync(["perf", "script", "-i", data, "-F", "comm,tid,time,ip,dso"], { stdout: "pipe", stderr: "pipe" });
  if (script.exitCode !== 0) throw new Error(`perf script on ${data} exited with ${script.exitCode}: ${script.stderr.toString()}`);
  const samples = parsePerfScript(script.stdout.toString());
  const mainTid = mainThreadOf(samples, executable);
  const threads = new Map<string, number>();
  for (const sample of samples) {
    const thread = sample.tid === mainTid ? "main" : sample.thread;
    threads.set(thread, (threads.get(thread) ?? 0) + 1);
  }
  const modules = BundledModules.fromExecutable(readFileSync(executable), loads);
  const code = baselineCodeByModule(loads, (file, line) => modules.moduleAt(file, line));
  return { samples: attribute(samples, mainTid, executable, jit, modules), threads, phases, code };
}

/** mainThreadOf: the thread named as the executable (the kernel keeps 15 characters) with the most samples. */
function mainThreadOf(samples: readonly PerfSample[], executable: string): number {
  const name = basename(executable).slice(0, 15);
  const counts = new Map<number, number>();
  for (const sample of samples) if (sample.thread === name) counts.set(sample.tid, (counts.get(sample.tid) ?? 0) + 1);
  const [tid] = [...counts].sort((a, b) => b[1] - a[1])[0] ?? [];
  if (tid === undefined) throw new Error(`no sample of a thread named ${name}`);
  return tid;
}

/** ms of CPU per VA that `count` samples stand for, over `vasCounted` VAs. */
const msPerVa = (count: number, vasCounted: number) => (count / sampleHz / vasCounted) * 1000;

function phaseOf(phases: readonly Phase[], time: number): string | undefined {
  return phases.find((phase) => time >= phase.from && time <= phase.to)?.name;
}

/** tally counts samples by a key; a sample whose key is undefined is left out. */
function tally(samples: readonly AttributedSample[], key: (s: AttributedSample) => string | undefined): Map<string, number> {
  const counts = new Map<string, number>();
  for (const sample of samples) {
    const k = key(sample);
    if (k !== undefined) counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return counts;
}

/** codeTable puts ours' and the floor's Baseline code side by side by module, the larger side first, with the whole run's totals. */
function codeTable(ours: readonly ModuleCode[], floor: readonly ModuleCode[]): string[] {
  const of = (census: readonly ModuleCode[], module: string) => census.find((row) => row.module === module) ?? { module, functions: 0, bytes: 0 };
  const modules = [...new Set([...ours, ...floor].map((row) => row.module))].map((module) => ({ module, ours: of(ours, module), floor: of(floor, module) }));
  modules.sort((a, b) => Math.max(b.ours.bytes, b.floor.bytes) - Math.max(a.ours.bytes, a.floor.bytes));
  const kib = (bytes: number) => (bytes / 1024).toFixed(1);
  const total = (census: readonly ModuleCode[]) => census.reduce((sum, row) => ({ functions: sum.functions + row.functions, bytes: sum.bytes + row.bytes }), { functions: 0, bytes: 0 });
  const [o, f] = [total(ours), total(floor)];
  return [
    "| module | ours: functions | ours: KiB | floor: functions | floor: KiB |",
    "|---|---:|---:|---:|---:|",
    ...modules.slice(0, top).map((row) => `| ${row.module} | ${row.ours.functions} | ${kib(row.ours.bytes)} | ${row.floor.functions} | ${kib(row.floor.bytes)} |`),
    `| all | ${o.functions} | ${kib(o.bytes)} | ${f.functions} | ${kib(f.bytes)} |`,
  ];
}

function report(ours: Profiled, floor: Profiled): string {
  const lines: string[] = [
    `# JIT profile: ours beside the floor client`,
    "",
    `${vas} VAs x ${cycles} cycles a process, --worker-threads=${opts.workers}, qps 1000/burst 2000, fault driver at 0 ms; ${pvFinalizers === "held" ? "PV finalizers on before each process (no cycle adds them)" : "PV finalizers added in the first cycle"}${opts["floor-caches"] ? "; the floor with its caches (FLOOR_CACHES=1)" : ""}; perf at ${sampleHz} Hz; ${runtimeOptions.join(" ")}; both built with \`scripts/build.ts --profiling\`.`,
    `ms of CPU per VA (a cycle attaches and detaches each VA once; start-up's are per VA of one cycle, for scale).`,
    "",
  ];
  const phaseNames = ["start-up", "first cycle", "later cycles"].filter((name) => cycles > 1 || name !== "later cycles");
  const vasIn = (name: string) => (name === "later cycles" ? vas * (cycles - 1) : vas);
  lines.push("## Main thread, by where it ran", "", `| phase | place | ours | floor | ours/floor |`, `|---|---|---:|---:|---:|`);
  for (const phase of phaseNames) {
    const counts = [ours, floor].map((p) => tally(p.samples, (s) => (phaseOf(p.phases, s.time) === phase ? s.place : undefined)));
    for (const place of ["jit", "runtime", "kernel", "libraries", "all"]) {
      const [o, f] = counts.map((c) => (place === "all" ? [...c.values()].reduce((a, b) => a + b, 0) : (c.get(place) ?? 0))) as [number, number];
      lines.push(`| ${phase} | ${place === "jit" ? "JIT code" : place} | ${msPerVa(o, vasIn(phase)).toFixed(3)} | ${msPerVa(f, vasIn(phase)).toFixed(3)} | ${f === 0 ? "–" : (o / f).toFixed(2)} |`);
    }
  }
  lines.push("", "## Every thread, whole process (samples)", "", "| thread | ours | floor |", "|---|---:|---:|");
  for (const thread of new Set([...ours.threads.keys(), ...floor.threads.keys()])) lines.push(`| ${thread} | ${ours.threads.get(thread) ?? 0} | ${floor.threads.get(thread) ?? 0} |`);
  lines.push("", "JSC PerfLog is the JIT dump's writer: the profile's own cost.");
  lines.push("", `## Baseline JIT code by module, the whole run (top ${top} by size)`, "", "Functions the Baseline JIT compiled at least once and their machine code: kept until a full collection finds it about 15 s old, and counted in the live size JavaScriptCore sizes its heap by.", "", ...codeTable(ours.code, floor.code));
  for (const phase of phaseNames.filter((name) => name !== "start-up")) {
    /** moduleTable is ours beside the floor by `key` over this phase's samples, largest first, as table rows in ms per VA. */
    const moduleTable = (key: (s: AttributedSample) => string | undefined): string[] => {
      const [o, f] = [ours, floor].map((p) => tally(p.samples, (s) => (phaseOf(p.phases, s.time) === phase ? key(s) : undefined))) as [Map<string, number>, Map<string, number>];
      const rows = [...new Set([...o.keys(), ...f.keys()])].map((module) => ({ module, ours: o.get(module) ?? 0, floor: f.get(module) ?? 0 })).sort((a, b) => Math.max(b.ours, b.floor) - Math.max(a.ours, a.floor));
      const ms = (count: number) => msPerVa(count, vasIn(phase)).toFixed(4);
      return ["| module | ours | floor | ours - floor |", "|---|---:|---:|---:|", ...rows.slice(0, top).map((row) => `| ${row.module} | ${ms(row.ours)} | ${ms(row.floor)} | ${ms(row.ours - row.floor)} |`)];
    };
    lines.push("", `## JIT code by source module, ${phase} (ms per VA; top ${top})`, "", ...moduleTable((s) => (s.place === "jit" ? (s.group ?? s.code) : undefined)));
    lines.push("", `## Everything on the main thread by the JavaScript that caused it, ${phase} (ms per VA; top ${top})`, "", "JIT code counts for its own module; the runtime's and the kernel's samples for the module of the nearest JIT frame on their stack (the collector for the function that allocated, a built-in for its caller).", "", ...moduleTable((s) => s.causedBy));
    const byCausingFunction = tally(ours.samples, (s) => (phaseOf(ours.phases, s.time) === phase && s.causedByFunction !== undefined ? `${s.causedByFunction} (${s.causedBy})` : undefined));
    lines.push("", `Ours' functions by everything they caused, ${phase} (ms per VA: their JIT code and the native work called from it):`, "");
    for (const [fn, count] of [...byCausingFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`- ${msPerVa(count, vasIn(phase)).toFixed(4)} ${fn}`);
    const byFunction = tally(ours.samples, (s) => (phaseOf(ours.phases, s.time) === phase && s.place === "jit" && s.module !== undefined ? `${s.code} (${s.module})${s.line === undefined ? "" : `: \`${s.line.replaceAll("`", "'")}\``}` : undefined));
    lines.push("", `Ours' hottest functions, ${phase} (ms per VA):`, "");
    for (const [fn, count] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`- ${msPerVa(count, vasIn(phase)).toFixed(4)} ${fn}`);
  }
  return `${lines.join("\n")}\n`;
}

await ensureComponents();
const executables = { ours: buildForProfiling("src/entry.ts", "ours"), floor: buildForProfiling("bench/floor/bare-attacher.ts", "floor") };
const ground = await startBenchGround("fake", 0, "");
const watch = await VaWatch.start(ground.cluster);
const ownPvs = { count: 0 };
let text: string;
try {
  const ours = await profile(ground, watch, "ours", executables.ours, ownPvs);
  const floor = await profile(ground, watch, "floor", executables.floor, ownPvs);
  text = report(ours, floor);
} finally {
  await watch.stop();
  await ground.stop();
}
if (opts.keep) console.log(`binaries, perf data and JIT dumps kept in ${work}`);
else rmSync(work, { recursive: true, force: true });
console.log(text);
const dir = join(import.meta.dir, "results", "scratch");
mkdirSync(dir, { recursive: true });
const stamp = new Date().toISOString().slice(0, 16).replace(":", "");
writeFileSync(join(dir, `${stamp}-${opts.label}.md`), text);
console.log(`written to ${join(dir, `${stamp}-${opts.label}.md`)}`);
