/**
 * Counts what the Baseline JIT compiled in one run, by source module: how
 * many functions and how many bytes of machine code.
 *
 * Why: JavaScriptCore keeps a function's compiled code until a full
 * collection finds it old (about 15 s in Bun 1.4.5) and not running, and
 * sizes its heap by what stays live, code included, so the code a burst
 * compiles is paid for several times over at its peak (bench/results/README.md,
 * eighteenth and nineteenth sessions). The CPU tables of bench/jit-profile.ts
 * say where time goes; this says where that code comes from.
 */
import type { JitCodeLoad } from "./jit-dump";

/** ModuleCode is one module's share of the Baseline JIT's output. */
export interface ModuleCode {
  readonly module: string;
  /** Functions compiled at least once, each counted once. */
  readonly functions: number;
  /** Their machine code, each function at the size of its last compilation. */
  readonly bytes: number;
}

/** The prefix JavaScriptCore gives a Baseline JIT code load's name ("JSC-Baseline: attach#AOL1k2"). */
const baselinePrefix = "JSC-Baseline";

/**
 * baselineCodeByModule groups the Baseline loads of a JIT dump by the module
 * `moduleOf` names for each load's source line, largest in bytes first. A
 * function compiled again (after its code was dropped) counts once, at its
 * last size; a load with no source line counts under "(no source line)",
 * and one whose file is no module of the program (Bun's own built-ins)
 * under "(Bun built-in)". Thunks, inline caches and the other stubs are
 * no function's code and are left out.
 */
export function baselineCodeByModule(loads: readonly JitCodeLoad[], moduleOf: (file: string, line: number) => string | undefined): ModuleCode[] {
  const lastBySite = new Map<string, { module: string; bytes: number }>();
  for (const load of loads) {
    if (!load.name.startsWith(baselinePrefix)) continue;
    const module = load.source === undefined ? "(no source line)" : (moduleOf(load.source.file, load.source.line) ?? "(Bun built-in)");
    const site = `${load.name}\0${load.source?.file ?? ""}\0${load.source?.line ?? ""}`;
    lastBySite.set(site, { module, bytes: Number(load.size) });
  }
  const byModule = new Map<string, { functions: number; bytes: number }>();
  for (const { module, bytes } of lastBySite.values()) {
    const total = byModule.get(module) ?? { functions: 0, bytes: 0 };
    byModule.set(module, { functions: total.functions + 1, bytes: total.bytes + bytes });
  }
  return [...byModule].map(([module, total]) => ({ module, ...total })).sort((a, b) => b.bytes - a.bytes || a.module.localeCompare(b.module));
}
