/**
 * The samples of a `perf record` of one attacher process, each put where
 * its CPU went: which thread, and for the main thread whether in machine
 * code the JIT made for a JavaScript function (named, with its source
 * module, through the JIT dump: jit-dump.ts, bundled-modules.ts), in the
 * runtime (the executable's own code: Bun, JavaScriptCore's interpreter,
 * its collector, JSON.parse and the other built-ins), or in the kernel.
 * For bench/jit-profile.ts.
 */
import type { BundledModules } from "./bundled-modules";
import type { JitCode } from "./jit-dump";

/** One line of `perf script -F comm,tid,time,ip,dso`. */
export interface PerfSample {
  readonly thread: string;
  readonly tid: number;
  /** Seconds, on the clock perf recorded with. */
  readonly time: number;
  readonly ip: bigint;
  readonly dso: string;
}

/** parsePerfScript reads `perf script -F comm,tid,time,ip,dso` output; lines of another shape are skipped. */
export function parsePerfScript(text: string): PerfSample[] {
  const samples: PerfSample[] = [];
  for (const line of text.split("\n")) {
    // The thread's name may hold spaces ("JSC PerfLog"); the tid, time, ip and (dso) follow it.
    const fields = /^\s*(.*?)\s+(\d+)\s+(\d+\.\d+):\s+([0-9a-f]+)\s+\((.*)\)\s*$/.exec(line);
    if (fields === null) continue;
    const [, thread = "", tid = "", time = "", ip = "", dso = ""] = fields;
    samples.push({ thread, tid: Number(tid), time: Number(time), ip: BigInt(`0x${ip}`), dso });
  }
  return samples;
}

/** Where a main-thread sample ran. */
export type SamplePlace = "jit" | "runtime" | "kernel" | "libraries";

/** AttributedSample: a main-thread sample and, in JIT code, the function and module. */
export interface AttributedSample {
  readonly time: number;
  readonly place: SamplePlace;
  /** JIT code only: JSC's kind of code ("Baseline", "InlineCache", "Thunk") and the function's name. */
  readonly code?: string;
  /** JIT code of a bundled JavaScript function only: its source module, or "(Bun built-in)". */
  readonly module?: string;
  /** JIT code of a bundled function only: the start of the bundle's line it starts on, which tells a function JSC left unnamed. */
  readonly line?: string;
}

/**
 * placeOf tells where one sample ran, from perf's name for the mapping it
 * lies in: the executable, the kernel, a JIT region (which perf names
 * "[JIT] tid N", "//anon" or "/tmp/perf-N.map" for lack of a symbol), or a
 * shared library.
 */
export function placeOf(dso: string, executable: string): SamplePlace {
  if (dso === executable) return "runtime";
  if (dso.includes("kernel")) return "kernel";
  if (dso.startsWith("[JIT]") || dso === "//anon" || dso === "[unknown]" || /^\/tmp\/perf-\d+\.map$/.test(dso)) return "jit";
  return "libraries";
}

/** attribute names each main-thread sample's place, and for JIT code its function and module. */
export function attribute(samples: readonly PerfSample[], mainTid: number, executable: string, jit: JitCode, modules: BundledModules): AttributedSample[] {
  const attributed: AttributedSample[] = [];
  for (const sample of samples) {
    if (sample.tid !== mainTid) continue;
    const place = placeOf(sample.dso, executable);
    if (place !== "jit") {
      attributed.push({ time: sample.time, place });
      continue;
    }
    // perf's times are seconds of CLOCK_MONOTONIC (jit-profile records with -k mono), the JIT dump's nanoseconds of it.
    const load = jit.at(sample.ip, BigInt(Math.round(sample.time * 1e9)));
    if (load === undefined) {
      attributed.push({ time: sample.time, place, code: "(no JIT dump record)" });
      continue;
    }
    const code = load.name.replace(/^JSC-/, "").replace(/#\w+$/, "");
    const module = load.source === undefined ? undefined : (modules.moduleAt(load.source.file, load.source.line) ?? "(Bun built-in)");
    const line = load.source === undefined ? undefined : modules.lineAt(load.source.file, load.source.line)?.slice(0, 60);
    attributed.push({ time: sample.time, place, code, ...(module === undefined ? {} : { module }), ...(line === undefined ? {} : { line }) });
  }
  return attributed;
}
