/**
 * The samples of a `perf record` of one attacher process, each put where
 * its CPU went: which thread, and for the main thread whether in machine
 * code the JIT made for a JavaScript function (named, with its source
 * module, through the JIT dump: jit-dump.ts, bundled-modules.ts), in the
 * runtime (the executable's own code: Bun, JavaScriptCore's interpreter,
 * its collector, JSON.parse and the other built-ins), or in the kernel.
 * With call chains (`perf record -g`: JSC's JIT code and Bun's own keep
 * frame pointers) a sample outside JIT code is also put under the nearest
 * JavaScript function on its stack, the one whose work caused it: the
 * runtime's share, unnamed by itself, then splits by our modules.
 * For bench/jit-profile.ts.
 */
import type { BundledModules } from "./bundled-modules";
import type { JitCode, JitCodeLoad } from "./jit-dump";

/** One frame of a call chain: an address and perf's name for the mapping it lies in. */
export interface PerfFrame {
  readonly ip: bigint;
  readonly dso: string;
}

/** One sample of `perf script -F comm,tid,time,ip,dso`. */
export interface PerfSample extends PerfFrame {
  readonly thread: string;
  readonly tid: number;
  /** Seconds, on the clock perf recorded with. */
  readonly time: number;
  /** With `perf record -g`: the frames below the sampled one, innermost first; else empty. */
  readonly callers: readonly PerfFrame[];
}

/**
 * parsePerfScript reads `perf script -F comm,tid,time,ip,dso` output: one
 * line a sample, or (recorded with -g) a line naming the sample and then
 * one line a frame, the sampled one first. Lines of another shape are skipped.
 */
export function parsePerfScript(text: string): PerfSample[] {
  const samples: PerfSample[] = [];
  let chained: { thread: string; tid: number; time: number; frames: PerfFrame[] } | undefined;
  const endChain = () => {
    const [sampled, ...callers] = chained?.frames ?? [];
    if (chained !== undefined && sampled !== undefined) samples.push({ thread: chained.thread, tid: chained.tid, time: chained.time, ip: sampled.ip, dso: sampled.dso, callers });
    chained = undefined;
  };
  for (const line of text.split("\n")) {
    // The thread's name may hold spaces ("JSC PerfLog"); the tid, time, ip and (dso) follow it.
    const whole = /^\s*(.*?)\s+(\d+)\s+(\d+\.\d+):\s+([0-9a-f]+)\s+\((.*)\)\s*$/.exec(line);
    if (whole !== null) {
      endChain();
      const [, thread = "", tid = "", time = "", ip = "", dso = ""] = whole;
      samples.push({ thread, tid: Number(tid), time: Number(time), ip: BigInt(`0x${ip}`), dso, callers: [] });
      continue;
    }
    const header = /^(\S.*?)\s+(\d+)\s+(\d+\.\d+):\s*$/.exec(line);
    if (header !== null) {
      endChain();
      const [, thread = "", tid = "", time = ""] = header;
      chained = { thread: thread.trim(), tid: Number(tid), time: Number(time), frames: [] };
      continue;
    }
    const frame = /^\s+([0-9a-f]+)\s+\((.*)\)\s*$/.exec(line);
    if (frame !== null && chained !== undefined) {
      const [, ip = "", dso = ""] = frame;
      chained.frames.push({ ip: BigInt(`0x${ip}`), dso });
      continue;
    }
    endChain();
  }
  endChain();
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
  /** JIT code only: its module, or for a stub or thunk (no source) its kind, "(InlineCache stubs)". */
  readonly group?: string;
  /** JIT code of a bundled function only: the start of the bundle's line it starts on, which tells a function JSC left unnamed. */
  readonly line?: string;
  /**
   * The JavaScript whose work the sample was: the module of the nearest
   * JavaScript function's JIT code, the sampled frame's own or a caller's
   * ("(no JavaScript on the stack)" when there is none: the event loop, a
   * timer; a stub's kind when only stubs are). Needs call chains; without
   * them only JIT samples have one.
   */
  readonly causedBy?: string;
  /** That function's name and the start of its line in the bundle, when causedBy is a module's. */
  readonly causedByFunction?: string;
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

/** attribute names each main-thread sample's place, for JIT code its function and module, and what JavaScript caused it. */
export function attribute(samples: readonly PerfSample[], mainTid: number, executable: string, jit: JitCode, modules: BundledModules): AttributedSample[] {
  const chains = samples.some((sample) => sample.callers.length > 0);
  // perf's times are seconds of CLOCK_MONOTONIC (jit-profile records with -k mono), the JIT dump's nanoseconds of it.
  const codeAt = (ip: bigint, time: number) => jit.at(ip, BigInt(Math.round(time * 1e9)));
  /** "Baseline: upsert": JSC's kind of code and the function's name, without the dump's prefix and hash. */
  const codeOf = (load: JitCodeLoad) => load.name.replace(/^JSC-/, "").replace(/#\w+$/, "");
  const groupOf = (load: JitCodeLoad) => (load.source === undefined ? `(${codeOf(load).split(":")[0]} stubs)` : (modules.moduleAt(load.source.file, load.source.line) ?? "(Bun built-in)"));
  const lineOf = (load: JitCodeLoad) => (load.source === undefined ? undefined : modules.lineAt(load.source.file, load.source.line)?.slice(0, 60));
  /** A JavaScript function's code caused its own samples, and whatever it called. */
  const causedByFunction = (load: JitCodeLoad) => {
    const line = lineOf(load);
    return { causedBy: groupOf(load), causedByFunction: `${codeOf(load).replace(/^\w+: /, "")}${line === undefined ? "" : `: \`${line.replaceAll("`", "'")}\``}` };
  };
  /**
   * What caused a sample whose own frame is not a JavaScript function's:
   * the nearest one among `callers`. Stubs and thunks (inline caches, the
   * trampolines into native functions) are passed over: they run for
   * whichever function called them, further down the stack; `stubs` is the
   * sampled stub's kind, the answer when no JavaScript function is found.
   */
  const causeAmong = (callers: readonly PerfFrame[], time: number, stubs?: string): { causedBy: string; causedByFunction?: string } => {
    for (const frame of callers) {
      if (placeOf(frame.dso, executable) !== "jit") continue;
      const load = codeAt(frame.ip, time);
      if (load === undefined) return { causedBy: "(no JIT dump record)" };
      if (load.source !== undefined) return causedByFunction(load);
      stubs ??= groupOf(load);
    }
    return { causedBy: stubs ?? "(no JavaScript on the stack)" };
  };
  const attributed: AttributedSample[] = [];
  for (const sample of samples) {
    if (sample.tid !== mainTid) continue;
    const place = placeOf(sample.dso, executable);
    if (place !== "jit") {
      attributed.push({ time: sample.time, place, ...(chains ? causeAmong(sample.callers, sample.time) : {}) });
      continue;
    }
    const load = codeAt(sample.ip, sample.time);
    if (load === undefined) {
      attributed.push({ time: sample.time, place, code: "(no JIT dump record)", causedBy: "(no JIT dump record)" });
      continue;
    }
    const group = groupOf(load);
    const line = lineOf(load);
    const caused = load.source !== undefined ? causedByFunction(load) : causeAmong(sample.callers, sample.time, group);
    attributed.push({ time: sample.time, place, code: codeOf(load), ...(load.source === undefined ? {} : { module: group }), group, ...(line === undefined ? {} : { line }), ...caused });
  }
  return attributed;
}
