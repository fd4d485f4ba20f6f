import { describe, expect, test } from "bun:test";
import { baselineCodeByModule } from "../lib/baseline-code-census";
import type { JitCodeLoad } from "../lib/jit-dump";

/** load is one JIT code load as readJitDump returns it. */
function load(name: string, size: number, source?: { file: string; line: number }): JitCodeLoad {
  return { timestampNs: 0n, address: 0n, size: BigInt(size), name, ...(source === undefined ? {} : { source }) };
}

/** The bundle's two modules: lines 1-9 are src/a.ts, from line 10 src/b.ts; any other file is no module of it. */
const moduleOf = (file: string, line: number) => (file === "bundle.js" ? (line < 10 ? "src/a.ts" : "src/b.ts") : undefined);

describe("baselineCodeByModule", () => {
  test("counts each Baseline function under the module of its source line, largest module first", () => {
    const census = baselineCodeByModule(
      [load("JSC-Baseline: one#AAAAAA", 100, { file: "bundle.js", line: 2 }), load("JSC-Baseline: two#BBBBBB", 300, { file: "bundle.js", line: 11 }), load("JSC-Baseline: three#CCCCCC", 50, { file: "bundle.js", line: 5 })],
      moduleOf,
    );
    expect(census).toEqual([
      { module: "src/b.ts", functions: 1, bytes: 300 },
      { module: "src/a.ts", functions: 2, bytes: 150 },
    ]);
  });

  test("a function compiled again counts once, at the size of its last compilation", () => {
    const site = { file: "bundle.js", line: 3 };
    const census = baselineCodeByModule([load("JSC-Baseline: again#AAAAAA", 400, site), load("JSC-Baseline: again#AAAAAA", 250, site)], moduleOf);
    expect(census).toEqual([{ module: "src/a.ts", functions: 1, bytes: 250 }]);
  });

  test("thunks, inline caches and other stubs are no function's code and are left out", () => {
    const census = baselineCodeByModule(
      [load("JSC-Thunk: stub", 900), load("JSC-InlineCache: get_by_id", 700, { file: "bundle.js", line: 2 }), load("JSC-LLIntThunk: op_call", 800), load("JSC-Baseline: kept#AAAAAA", 10, { file: "bundle.js", line: 2 })],
      moduleOf,
    );
    expect(census).toEqual([{ module: "src/a.ts", functions: 1, bytes: 10 }]);
  });

  test("a load in a file of no module counts as Bun's built-in, one without a source line under its own name", () => {
    const census = baselineCodeByModule([load("JSC-Baseline: write#AAAAAA", 60, { file: "/tmp/dump/source-3.js", line: 7 }), load("JSC-Baseline: anonymous#BBBBBB", 40)], moduleOf);
    expect(census).toEqual([
      { module: "(Bun built-in)", functions: 1, bytes: 60 },
      { module: "(no source line)", functions: 1, bytes: 40 },
    ]);
  });
});
