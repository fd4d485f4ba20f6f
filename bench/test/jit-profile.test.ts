import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BundledModules, functionName } from "../lib/bundled-modules";
import { JitCode, readJitDump, type JitCodeLoad } from "../lib/jit-dump";
import { attribute, parsePerfScript, placeOf } from "../lib/perf-samples";

/** A jitdump as JSC writes it: header, then each debug-info record before its code load. */
function jitDump(records: readonly { address: bigint; size: number; name: string; timestampNs?: bigint; source?: { file: string; line: number } }[]): Uint8Array {
  const parts: Buffer[] = [];
  const header = Buffer.alloc(40);
  header.writeUInt32LE(0x4a695444, 0);
  header.writeUInt32LE(1, 4);
  header.writeUInt32LE(40, 8);
  parts.push(header);
  for (const record of records) {
    if (record.source !== undefined) {
      const file = Buffer.from(`${record.source.file}\0`);
      const debug = Buffer.alloc(16 + 16 + 16 + file.length);
      debug.writeUInt32LE(2, 0);
      debug.writeUInt32LE(debug.length, 4);
      debug.writeBigUInt64LE(record.address, 16);
      debug.writeBigUInt64LE(1n, 24);
      debug.writeBigUInt64LE(record.address + 4n, 32);
      debug.writeUInt32LE(record.source.line, 40);
      file.copy(debug, 48);
      parts.push(debug);
    }
    const name = Buffer.from(`${record.name}\0`);
    const load = Buffer.alloc(16 + 40 + name.length + record.size);
    load.writeUInt32LE(0, 0);
    load.writeUInt32LE(load.length, 4);
    load.writeBigUInt64LE(record.timestampNs ?? 0n, 8);
    load.writeBigUInt64LE(record.address, 16 + 8);
    load.writeBigUInt64LE(record.address, 16 + 16);
    load.writeBigUInt64LE(BigInt(record.size), 16 + 24);
    name.copy(load, 56);
    parts.push(load);
  }
  return Buffer.concat(parts);
}

const bundle = ["// @bun", "// src/kube/store.ts", "class Store {", "  upsert(object) {", "// src/log/logger.ts", "function write(line) {", "}"].join("\n");
/** When the test's code was made (CLOCK_MONOTONIC ns): before every sample of the script below. */
const madeAt = 1_400_000_000_000n;
const loads: JitCodeLoad[] = [
  { timestampNs: madeAt, address: 0x1000n, size: 0x100n, name: "JSC-Baseline: upsert#AAAAAA", source: { file: "/$bunfs/root/main-abc.js", line: 4 } },
  { timestampNs: madeAt, address: 0x1100n, size: 0x100n, name: "JSC-Baseline: write#BBBBBB", source: { file: "/$bunfs/root/main-abc.js", line: 6 } },
  { timestampNs: madeAt, address: 0x1200n, size: 0x80n, name: "JSC-Baseline: <name not materialized>#CCCCCC", source: { file: "/$bunfs/root/main-abc.js", line: 3 } },
  { timestampNs: madeAt, address: 0x1300n, size: 0x80n, name: "JSC-Baseline: map#DDDDDD", source: { file: "/tmp/src/source-3-1.js", line: 1 } },
  { timestampNs: madeAt, address: 0x2000n, size: 0x40n, name: "JSC-InlineCache: GetById" },
];

describe("the JIT dump", () => {
  test("gives each code load its time, address, size, name and the source line of the debug record before it", () => {
    const read = readJitDump(jitDump([
      { address: 0x7f00n, size: 64, name: "JSC-Baseline: attach#AOL1k2", timestampNs: 5n, source: { file: "/$bunfs/root/main-x.js", line: 11134 } },
      { address: 0x8000n, size: 32, name: "JSC-Thunk: DefaultCall", timestampNs: 6n },
    ]));
    expect(read).toEqual([
      { timestampNs: 5n, address: 0x7f00n, size: 64n, name: "JSC-Baseline: attach#AOL1k2", source: { file: "/$bunfs/root/main-x.js", line: 11134 } },
      { timestampNs: 6n, address: 0x8000n, size: 32n, name: "JSC-Thunk: DefaultCall" },
    ]);
  });

  test("ends at a record cut short by the process's end", () => {
    const whole = jitDump([{ address: 0x10n, size: 8, name: "JSC-Thunk: A" }, { address: 0x20n, size: 8, name: "JSC-Thunk: B" }]);
    expect(readJitDump(whole.subarray(0, whole.length - 4)).map((load) => load.name)).toEqual(["JSC-Thunk: A"]);
  });

  test("refuses a file that is not one", () => {
    expect(() => readJitDump(new Uint8Array(64))).toThrow("not a JIT dump");
  });
});

describe("the bundle's modules", () => {
  test("a line belongs to the module whose comment comes last before it", () => {
    const modules = BundledModules.matching(["// @bun\nunrelated();", bundle], loads);
    expect(modules.moduleAt("/$bunfs/root/main-abc.js", 4)).toBe("src/kube/store.ts");
    expect(modules.moduleAt("/$bunfs/root/main-abc.js", 6)).toBe("src/log/logger.ts");
    expect(modules.moduleAt("/$bunfs/root/main-abc.js", 1)).toBe("(chunk prologue)");
  });

  test("a file the dump cites that matches no chunk (Bun's built-ins) has no module", () => {
    expect(BundledModules.matching([bundle], loads).moduleAt("/tmp/src/source-3-1.js", 1)).toBeUndefined();
  });

  test("a file is matched to the chunk whose lines hold its functions' names, not to another chunk as long", () => {
    const decoy = bundle.replace("upsert", "insert").replace("write", "print").replace("src/kube", "src/decoy");
    expect(BundledModules.matching([decoy, bundle], loads).moduleAt("/$bunfs/root/main-abc.js", 4)).toBe("src/kube/store.ts");
  });

  test("a built-in's line is read from the file JSC's source code dump wrote, which the JIT dump cites", () => {
    const dir = mkdtempSync(join(tmpdir(), "source-dump-"));
    try {
      const dump = join(dir, "source-3-1.js");
      writeFileSync(dump, "(function (stream) {\n  return readableStreamRead(stream);\n})\n");
      const modules = BundledModules.matching([bundle], loads);
      expect(modules.lineAt(dump, 2)).toBe("return readableStreamRead(stream);");
      expect(modules.moduleAt(dump, 2)).toBeUndefined();
      expect(modules.lineAt(join(tmpdir(), "no-such-dump.js"), 1)).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a function JSC has not named counts for no chunk", () => {
    expect(functionName("JSC-Baseline: <name not materialized>#C3yW3h")).toBeUndefined();
    expect(functionName("JSC-Baseline: decodeHuffman#CHpUST")).toBe("decodeHuffman");
  });
});

describe("perf's samples", () => {
  const script = [
    "     ours 21570  1444.689226:  ffffffff815a2841 ([kernel.kallsyms])",
    "     JSC PerfLog 21572  1444.696384:  ffffffff8226ee21 ([kernel.kallsyms])",
    "     ours 21570  1444.700000:           1d4a6d6 (/tmp/p/ours)",
    "     ours 21570  1444.710000:      1010 ([JIT] tid 21570)",
    "     ours 21570  1444.720000:      1350 (/tmp/perf-21570.map)",
    "     ours 21570  1444.730000:      9999 (//anon)",
    "     ours 21570  1444.740000:      7f00 (/usr/lib/x86_64-linux-gnu/libc.so.6)",
    "not a sample line",
  ].join("\n");

  test("each line gives thread, tid, time, address and mapping; a thread's name may hold spaces", () => {
    const samples = parsePerfScript(script);
    expect(samples).toHaveLength(7);
    expect(samples[1]).toEqual({ thread: "JSC PerfLog", tid: 21572, time: 1444.696384, ip: 0xffffffff8226ee21n, dso: "[kernel.kallsyms]", callers: [] });
  });

  const chained = [
    "ours 21570  1444.750000: ",
    "\t         1d4a6d6 (/tmp/p/ours)",
    "\t         1c08d4c (/tmp/p/ours)",
    "\t            1010 (/tmp/perf-21570.map)",
    "\t            1110 (/tmp/perf-21570.map)",
    "",
    "JSC PerfLog 21572  1444.760000: ",
    "\t ffffffff8226ee21 ([kernel.kallsyms])",
    "",
    "ours 21570  1444.770000: ",
    "\t ffffffff8226ee21 ([kernel.kallsyms])",
    "\t         1c08d4c (/tmp/p/ours)",
    "",
    "ours 21570  1444.780000: ",
    "\t            1110 (/tmp/perf-21570.map)",
    "\t            1010 (/tmp/perf-21570.map)",
    "",
    "ours 21570  1444.790000: ",
    "\t         1d4a6d6 (/tmp/p/ours)",
    "\t            2010 (/tmp/perf-21570.map)",
    "\t            1310 (/tmp/perf-21570.map)",
    "",
    "ours 21570  1444.800000: ",
    "\t            2010 (/tmp/perf-21570.map)",
    "\t            1010 (/tmp/perf-21570.map)",
  ].join("\n");

  test("with call chains (perf record -g), each sample is its first frame and the frames below it, innermost first", () => {
    const samples = parsePerfScript(chained);
    expect(samples.map((s) => [s.thread, s.tid, s.ip, s.callers.map((frame) => frame.ip)])).toEqual([
      ["ours", 21570, 0x1d4a6d6n, [0x1c08d4cn, 0x1010n, 0x1110n]],
      ["JSC PerfLog", 21572, 0xffffffff8226ee21n, []],
      ["ours", 21570, 0xffffffff8226ee21n, [0x1c08d4cn]],
      ["ours", 21570, 0x1110n, [0x1010n]],
      ["ours", 21570, 0x1d4a6d6n, [0x2010n, 0x1310n]],
      ["ours", 21570, 0x2010n, [0x1010n]],
    ]);
  });

  test("a sample outside JIT code is caused by the nearest JavaScript function on its stack, past any stub; JIT code by its own", () => {
    const attributed = attribute(parsePerfScript(chained), 21570, "/tmp/p/ours", new JitCode(loads), BundledModules.matching([bundle], loads));
    expect(attributed.map((s) => [s.place, s.causedBy])).toEqual([
      ["runtime", "src/kube/store.ts"],
      ["kernel", "(no JavaScript on the stack)"],
      ["jit", "src/log/logger.ts"],
      ["runtime", "(Bun built-in)"],
      ["jit", "src/kube/store.ts"],
    ]);
    // JIT code is grouped by its own module, a stub by its kind, whoever caused it.
    expect(attributed.filter((s) => s.place === "jit").map((s) => s.group)).toEqual(["src/log/logger.ts", "(InlineCache stubs)"]);
  });

  test("a sample is in the runtime, the kernel, JIT code or a library by its mapping", () => {
    expect(placeOf("/tmp/p/ours", "/tmp/p/ours")).toBe("runtime");
    expect(placeOf("[kernel.kallsyms]", "/tmp/p/ours")).toBe("kernel");
    expect(placeOf("[JIT] tid 5", "/tmp/p/ours")).toBe("jit");
    expect(placeOf("/tmp/perf-5.map", "/tmp/p/ours")).toBe("jit");
    expect(placeOf("/usr/lib/x86_64-linux-gnu/libc.so.6", "/tmp/p/ours")).toBe("libraries");
  });

  test("only the main thread's samples are attributed, JIT ones to their function and module", () => {
    const attributed = attribute(parsePerfScript(script), 21570, "/tmp/p/ours", new JitCode(loads), BundledModules.matching([bundle], loads));
    expect(attributed.map((s) => [s.place, s.code, s.module, s.line])).toEqual([
      ["kernel", undefined, undefined, undefined],
      ["runtime", undefined, undefined, undefined],
      ["jit", "Baseline: upsert", "src/kube/store.ts", "upsert(object) {"],
      ["jit", "Baseline: map", "(Bun built-in)", undefined],
      ["jit", "(no JIT dump record)", undefined, undefined],
      ["libraries", undefined, undefined, undefined],
    ]);
  });

  test("an address is found in the code load whose range holds it, and in none past its end", () => {
    const jit = new JitCode(loads);
    const later = madeAt + 1n;
    expect(jit.at(0x10ffn, later)?.name).toBe("JSC-Baseline: upsert#AAAAAA");
    expect(jit.at(0x2040n, later)).toBeUndefined();
    expect(jit.at(0xfffn, later)).toBeUndefined();
  });

  test("an address the JIT reused is named after the code that was there when the sample was taken", () => {
    const reused = new JitCode([
      { timestampNs: 100n, address: 0x5000n, size: 0x400n, name: "JSC-Baseline: addFields#AAAAAA" },
      // Made later, where addFields's code lay after the collector freed it: starts inside its old range, and ends past it.
      { timestampNs: 900n, address: 0x5200n, size: 0x400n, name: "JSC-Baseline: upsert#BBBBBB" },
      { timestampNs: 950n, address: 0x4f00n, size: 0x180n, name: "JSC-Baseline: write#CCCCCC" },
    ]);
    expect(reused.at(0x5300n, 500n)?.name).toBe("JSC-Baseline: addFields#AAAAAA");
    expect(reused.at(0x5300n, 1000n)?.name).toBe("JSC-Baseline: upsert#BBBBBB");
    expect(reused.at(0x5050n, 1000n)?.name).toBe("JSC-Baseline: write#CCCCCC");
    expect(reused.at(0x5050n, 920n)?.name).toBe("JSC-Baseline: addFields#AAAAAA");
    expect(reused.at(0x5500n, 500n)).toBeUndefined();
    expect(reused.at(0x5000n, 50n)).toBeUndefined();
  });
});
