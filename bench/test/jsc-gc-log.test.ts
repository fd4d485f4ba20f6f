import { describe, expect, it } from "bun:test";
import { tallyGcLog } from "../lib/jsc-gc-log";

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

  it("reads a concurrent collection whose START and END are lines apart, with the attacher's log between", () => {
    const log = [
      "[GC<0x27fb2000118>: START M 6643kb => EdenCollection, a=0kb hf=0.000 mu=0.600 v=0kb (C:0 M:0 P1:0) o=0 b=0 i#1:N<CsMsrShDMsm(0)SrbBcs> 2971+0 p=1.551183ms (max 1.551183)...]",
      "[GC<0x27fb2000118>: M a=16kb hf=0.005 mu=0.597 v=909kb (C:511 M:0 P1:397) o=4 b=0 0+0 p=0.402969ms (max 1.551183)...]",
      'I1126 13:24:24.574594    8287 reflector.ts:126] "Listed" kind="PersistentVolume" count=1000',
      "[GC<0x27fb2000118>: M a=198kb hf=0.061 mu=0.564 v=3697kb o=8 b=40 i#7:P<BcsSrb>Pbc => 6603kb, p=2.176651ms (max 13.564022), cycle 76.734787ms END]",
      timerGc,
    ].join("\n");
    // The second collection starts below what the first left (2223 < 6603 kb): it adds nothing.
    expect(tallyGcLog(log, 643)).toEqual({ collections: 2, byThreshold: 0, allocatedBytes: (6643 - 643) * 1024, lastHeapKb: 404 });
  });

  it("finds nothing in a log without GC lines, such as Go's or a Bun program's without the option", () => {
    expect(tallyGcLog('{"msg":"Caches synced"}\nI1126 13:00:00 reflector.go:1] "Caches populated"\n', 0)).toEqual({ collections: 0, byThreshold: 0, allocatedBytes: 0, lastHeapKb: 0 });
  });
});
