/**
 * Reads the JIT dump JavaScriptCore writes under `BUN_JSC_useJITDump=1`
 * (Linux perf's jitdump format, tools/perf/Documentation/jitdump-specification.txt):
 * where each piece of machine code the JIT made lives, its name, and the
 * source line it starts at, and which piece an address lies in (JitCode).
 * perf cannot name the samples that land in JIT
 * code without it, and `perf inject --jit` does not find JSC's file, which
 * is named jit-TID-PID.dump where perf expects jit-PID.dump; so the bench
 * reads it itself (bench/jit-profile.ts).
 */

/** One piece of JIT code: `name` as JSC gives it ("JSC-Baseline: attach#AOL1k2"), and where its source starts when the dump says. */
export interface JitCodeLoad {
  /** When the JIT made it: CLOCK_MONOTONIC in ns, the clock JSC stamps its records with. */
  readonly timestampNs: bigint;
  readonly address: bigint;
  readonly size: bigint;
  readonly name: string;
  readonly source?: { readonly file: string; readonly line: number };
}

/** Record ids of the jitdump format. */
const codeLoadRecord = 0;
const debugInfoRecord = 2;
/** Every record starts with an id, its total size and a timestamp. */
const recordHeaderBytes = 16;

/**
 * readJitDump lists the code loads of a dump, each with the source line of
 * the debug-info record that precedes it (the format puts a load's debug
 * information just before the load). A record cut short at the end (the
 * process killed while writing) ends the list.
 */
export function readJitDump(bytes: Uint8Array): JitCodeLoad[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteLength < 12 || view.getUint32(0, true) !== 0x4a695444) throw new Error("not a JIT dump: the file does not start with the jitdump magic");
  const loads: JitCodeLoad[] = [];
  const sourceOf = new Map<bigint, { file: string; line: number }>();
  let at = view.getUint32(8, true);
  while (at + recordHeaderBytes <= bytes.byteLength) {
    const id = view.getUint32(at, true);
    const size = view.getUint32(at + 4, true);
    if (size < recordHeaderBytes || at + size > bytes.byteLength) break;
    const body = at + recordHeaderBytes;
    if (id === debugInfoRecord) {
      // code address, entry count, then entries: address, line, discriminator, file name (NUL-ended).
      const entries = Number(view.getBigUint64(body + 8, true));
      if (entries > 0) {
        const entry = body + 16;
        sourceOf.set(view.getBigUint64(body, true), { line: view.getUint32(entry + 8, true), file: cString(bytes, entry + 16) });
      }
    } else if (id === codeLoadRecord) {
      // pid, tid, vma, code address, code size, code index, then the name (NUL-ended) and the code.
      const address = view.getBigUint64(body + 16, true);
      const source = sourceOf.get(address);
      loads.push({ timestampNs: view.getBigUint64(at + 8, true), address, size: view.getBigUint64(body + 24, true), name: cString(bytes, body + 40), ...(source === undefined ? {} : { source }) });
    }
    at += size;
  }
  return loads;
}

function cString(bytes: Uint8Array, start: number): string {
  const end = bytes.indexOf(0, start);
  return new TextDecoder().decode(bytes.subarray(start, end < 0 ? bytes.length : end));
}

/**
 * JitCode finds the JIT code an address lay in at a given time. The JIT
 * frees code and reuses its memory for other code within one process, so
 * an address can name several functions over a run: a sample is named
 * after the latest code made at its address before the sample was taken.
 * Naming it after whichever code a lookup met first once put start-up's
 * protobuf descriptor building into every later cycle of a profile.
 */
export class JitCode {
  /** Sorted by address. */
  private readonly loads: readonly JitCodeLoad[];
  /** The largest piece of code: how far before an address a piece holding it can start. */
  private readonly largest: bigint;

  constructor(loads: readonly JitCodeLoad[]) {
    this.loads = [...loads].sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
    this.largest = loads.reduce((max, load) => (load.size > max ? load.size : max), 0n);
  }

  /** at returns the code at `ip` when the sample taken at `timeNs` (CLOCK_MONOTONIC) was, if the dump has any. */
  at(ip: bigint, timeNs: bigint): JitCodeLoad | undefined {
    // The last piece starting at or below ip; every piece holding ip starts within `largest` before it.
    let low = 0;
    let high = this.loads.length - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      if ((this.loads[middle] as JitCodeLoad).address <= ip) low = middle + 1;
      else high = middle - 1;
    }
    let found: JitCodeLoad | undefined;
    for (let index = high; index >= 0; index--) {
      const load = this.loads[index] as JitCodeLoad;
      if (load.address + this.largest <= ip) break;
      const holds = ip < load.address + load.size && load.timestampNs <= timeNs;
      if (holds && (found === undefined || load.timestampNs > found.timestampNs)) found = load;
    }
    return found;
  }
}
