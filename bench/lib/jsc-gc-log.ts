/**
 * Garbage per VA cycle, read from JavaScriptCore's own GC log
 * (`BUN_JSC_logGC=1`, which the bench sets for the attachers under
 * `--gc-log`, with Bun's GC timer off, BUN_GC_TIMER_DISABLE=1, so that
 * the allocation threshold asks for most collections; a compiled Bun
 * binary reads both at start like `bun` does, and our re-exec keeps them).
 * JSC prints, per collection:
 *
 *   Requesting GC because bytes allocated this cycle: 8400394 exceed bytes allowed: ...
 *   [GC<0x...>: START M 8944kb => EdenCollection, ... => 175kb, p=... END]
 *
 * The first line (only for collections the allocation threshold asked for)
 * is JSC's own count of the bytes allocated since the last collection,
 * extra memory (array buffers, strings' backing stores) included. A
 * collection without it (the GC timer's, a full collection after an eden
 * one) is counted as the growth of the heap's capacity since the last
 * collection ended (START's kb minus the previous END's `=> kb`), a lower
 * bound: it came 10-19% below JSC's count where both were known (an
 * attacher's 1,000-VA cycle). What is allocated after
 * the last collection is not counted: up to one eden (about 8 MiB) per
 * run, so the figure is for cycles of hundreds of VAs or more.
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
