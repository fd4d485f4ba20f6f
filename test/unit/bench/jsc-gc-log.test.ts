import { describe, expect, it } from "bun:test";
import { tallyGcLog } from "../../../bench/lib/jsc-gc-log";

// Lines as Bun 1.4.5 prints them under BUN_JSC_logGC=1 (abridged in the middle), with an attacher's log line between.
const thresholdGc = [
  "Requesting GC because bytes allocated this cycle: 8400394 exceed bytes allowed: 8388608 normal bytes: 8400394 oversized bytes: 0 last oversized: 0",
  "[GC<0x4289d39c118>: START M 8944kb => EdenCollection, a=0kb hf=0.000 mu=0.600 v=0kb (C:0 M:0 P1:0) o=0 b=0 i#3:P<ShMsr>Pbc => 175kb, p=59.168893ms (max 59.168893), cycle 6.717796ms END]",
  "GC END!",
  "[GC<0x4289d39c118>: epilogue 0.410374ms]",
];
const timerGc = "[GC<0x4289d39c118>: START M 2223kb => FullCollection, a=0kb hf=0.000 mu=0.600 v=0kb o=1 b=1 i#3:P<JwWs>Pbc => 404kb, p=0.630666ms (max 59.168893), cycle 0.623551ms END]";

describe("garbage read from JavaScriptCore's GC log", () => {
  it("takes JSC's own count where the threshold asked for the collection, and the capacity's growth since the last one where not", () => {
    const log = [...thresholdGc, '{"msg":"Attached","va":"va-1"}', timerGc].join("\n");
    expect(tallyGcLog(log, 100)).toEqual({ collections: 2, byThreshold: 1, allocatedBytes: 8400394 + (2223 - 175) * 1024, lastHeapKb: 404 });
  });

  it("counts a collection after a stretch's start from the heap the collection before it left", () => {
    expect(tallyGcLog(timerGc, 2000).allocatedBytes).toBe(223 * 1024);
    // A heap that shrank without a collection in the log (the growth is never counted below zero).
    expect(tallyGcLog(timerGc, 3000).allocatedBytes).toBe(0);
  });

  it("finds nothing in a log without GC lines, such as Go's or a Bun program's without the option", () => {
    expect(tallyGcLog('{"msg":"Caches synced"}\nI1126 13:00:00 reflector.go:1] "Caches populated"\n', 0)).toEqual({ collections: 0, byThreshold: 0, allocatedBytes: 0, lastHeapKb: 0 });
  });
});
