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
      loads.push({ address, size: view.getBigUint64(body + 24, true), name: cString(bytes, body + 40), ...(source === undefined ? {} : { source }) });
    }
    at += size;
  }
  return loads;
}

function cString(bytes: Uint8Array, start: number): string {
  const end = bytes.indexOf(0, start);
  return new TextDecoder().decode(bytes.subarray(start, end < 0 ? bytes.length : end));
}

/** JitCode finds the JIT code an address lies in. */
export class JitCode {
  private readonly loads: readonly JitCodeLoad[];

  constructor(loads: readonly JitCodeLoad[]) {
    // Sorted by address; a range the JIT reused keeps its last load (the later code ran longer in a short run).
    const byAddress = new Map<bigint, JitCodeLoad>();
    for (const load of loads) byAddress.set(load.address, load);
    this.loads = [...byAddress.values()].sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  }

  at(ip: bigint): JitCodeLoad | undefined {
    let low = 0;
    let high = this.loads.length - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const load = this.loads[middle] as JitCodeLoad;
      if (ip < load.address) high = middle - 1;
      else if (ip >= load.address + load.size) low = middle + 1;
      else return load;
    }
    return undefined;
  }
}
