/**
 * Where a process's resident pages live, from /proc/<pid>/smaps: pages of
 * its own executable (by segment: code, read-only data, data), of other
 * files (libc and the like), and anonymous pages (heap, stacks, JSC's and
 * the allocator's arenas, and the copied-on-write pages of file mappings).
 * RssAnon in /proc/<pid>/status says how much is anonymous; this says which
 * mappings the file-backed rest belongs to, so ours and the floor can be
 * compared mapping by mapping.
 */
import { readFileSync, readlinkSync } from "node:fs";
import { isGone } from "./proc-stats";

/** RssSplit is one reading, in bytes. */
export interface RssSplit {
  /** File-backed resident pages of the executable, per permission string of its mappings (`r-xp`: code; `r--p`: read-only data, Bun's embedded bundle among it). */
  readonly executableBytes: Readonly<Record<string, number>>;
  /** File-backed resident pages of every other file mapping (shared libraries). */
  readonly otherFileBytes: number;
  /** Anonymous resident pages of every mapping. */
  readonly anonBytes: number;
  /** Of anonBytes, the `[heap]` mapping's (the C heap: malloc below mmap's threshold). */
  readonly brkHeapBytes: number;
}

/** Sum of executableBytes over its segments. */
export function executableTotal(split: RssSplit): number {
  return Object.values(split.executableBytes).reduce((sum, bytes) => sum + bytes, 0);
}

/**
 * parseSmaps sums smaps' Rss and Anonymous fields by mapping: a mapping's
 * file-backed part is Rss minus Anonymous. `executable` is the path of the
 * process's executable as smaps names it.
 */
export function parseSmaps(text: string, executable: string): RssSplit {
  const executableBytes: Record<string, number> = {};
  let otherFileBytes = 0;
  let anonBytes = 0;
  let brkHeapBytes = 0;
  let perms = "";
  let path = "";
  let rss = 0;
  const flush = () => {
    // Called at each header and at the end, with the previous mapping's Rss and Anonymous counted.
    if (perms === "") return;
    if (path === executable) executableBytes[perms] = (executableBytes[perms] ?? 0) + rss;
    else if (path.startsWith("/")) otherFileBytes += rss;
    rss = 0;
  };
  for (const line of text.split("\n")) {
    // Header: `start-end perms offset dev inode [path]`; fields: `Name:   N kB`.
    const header = /^[0-9a-f]+-[0-9a-f]+ (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header !== null) {
      flush();
      perms = header[1] ?? "";
      path = (header[2] ?? "").trim();
      continue;
    }
    const field = /^(Rss|Anonymous):\s+(\d+) kB$/.exec(line);
    if (field === null) continue;
    const bytes = Number(field[2]) * 1024;
    if (field[1] === "Rss") {
      rss += bytes;
    } else {
      rss -= bytes;
      anonBytes += bytes;
      if (path === "[heap]") brkHeapBytes += bytes;
    }
  }
  flush();
  return { executableBytes, otherFileBytes, anonBytes, brkHeapBytes };
}

/** readRssSplit reads `pid`'s smaps now, or undefined once it has exited. */
export function readRssSplit(pid: number): RssSplit | undefined {
  try {
    return parseSmaps(readFileSync(`/proc/${pid}/smaps`, "utf8"), readlinkSync(`/proc/${pid}/exe`));
  } catch (e: unknown) {
    if (isGone(e)) return undefined;
    throw e;
  }
}

/** describeRssSplit is one line for a report's notes, in MiB: the executable by segment, other files, anonymous. */
export function describeRssSplit(split: RssSplit): string {
  const mib = (bytes: number) => (bytes / 1048576).toFixed(1);
  const segments = Object.entries(split.executableBytes)
    .sort(([, a], [, b]) => b - a)
    .map(([perms, bytes]) => `${perms} ${mib(bytes)}`)
    .join(", ");
  return `executable ${mib(executableTotal(split))} (${segments}), other files ${mib(split.otherFileBytes)}, anonymous ${mib(split.anonBytes)} ([heap] ${mib(split.brkHeapBytes)})`;
}
