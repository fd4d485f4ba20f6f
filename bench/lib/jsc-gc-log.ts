/**
 * Garbage per VA cycle, read from JavaScriptCore's own GC log. Under
 * `bench/run.ts --gc-log` the Bun programs under test run with
 * BUN_JSC_logGC=1 BUN_JSC_useGenerationalGC=0 BUN_GC_TIMER_DISABLE=1 (a
 * compiled binary reads them at start like `bun` does; our re-exec keeps
 * them): every collection is a full one, none comes from Bun's timer.
 * JSC logs, per collection:
 *
 *   Requesting GC because bytes allocated this cycle: 8400394 exceed bytes allowed: ...
 *   [GC<0x...>: START M 8944kb => FullCollection, ... => 175kb, p=... END]
 *
 * (a concurrent collection logs its START and END lines apart). The first
 * line, JSC's own count of the bytes allocated since the last collection
 * (extra memory such as array buffers included), comes only with a
 * collection the allocation threshold asked for: all of them in a
 * synchronous loop (bench/garbage-per-call.ts), almost none in an
 * attacher, whose collections JSC's own timer asks for first. Without it
 * the heap's growth since the last collection ended (START's kb minus the
 * previous END's) stands in: a lower bound, which on a 1,000-VA cycle gave
 * the same ours/floor ratio (1.6-2.0x) under three GC settings, its
 * absolute value varying up to 2x with the schedule. Bytes allocated
 * after a stretch's last collection are not counted and bytes before its
 * first may be: the figure is for cycles of hundreds of VAs or more, and
 * compares programs within one run.
 */

/** GcTally is what the GC lines of one stretch of a log add up to. */
export interface GcTally {
  /** Collections in the stretch. */
  readonly collections: number;
  /** Of them, asked for by the allocation threshold (their bytes are JSC's own count). */
  readonly byThreshold: number;
  /** Bytes allocated before the stretch's collections. */
  readonly allocatedBytes: number;
  /** The heap's capacity after the stretch's last collection, in kb (the base for the next stretch). */
  readonly lastHeapKb: number;
}

const requestLine = /Requesting GC because bytes allocated this cycle: (\d+)/;
const startLine = /: START \S+ (\d+)kb => \w+Collection/;
const endLine = /=> (\d+)kb, p=.*END\]/;

/** tallyGcLog adds up the GC lines of `text`, a log's stretch that starts after a collection that left `baseHeapKb`. */
export function tallyGcLog(text: string, baseHeapKb: number): GcTally {
  let collections = 0;
  let byThreshold = 0;
  let allocatedBytes = 0;
  let lastHeapKb = baseHeapKb;
  let requested: number | undefined;
  for (const line of text.split("\n")) {
    const request = requestLine.exec(line);
    if (request !== null) {
      requested = Number(request[1]);
      continue;
    }
    // A concurrent collection logs its START, then one line per increment; the last says what it left, with END.
    const start = startLine.exec(line);
    if (start !== null) {
      collections++;
      if (requested !== undefined) byThreshold++;
      allocatedBytes += requested ?? Math.max(0, Number(start[1]) - lastHeapKb) * 1024;
      requested = undefined;
    }
    const end = endLine.exec(line);
    if (end !== null) lastHeapKb = Number(end[1]);
  }
  return { collections, byThreshold, allocatedBytes, lastHeapKb };
}
