/**
 * Reads a process's memory and CPU from /proc: VmRSS and VmHWM from
 * /proc/<pid>/status, utime+stime from /proc/<pid>/stat. Linux only, which is
 * where the attachers run.
 */
import { readdirSync, readFileSync } from "node:fs";

/** ProcMemory is one reading of /proc/<pid>/status, in bytes. */
export interface ProcMemory {
  readonly rssBytes: number;
  readonly hwmBytes: number;
  /**
   * RssAnon: the private part of RSS (heap, stacks), without the pages of
   * the executable and libraries it maps. Both binaries are ~100 MB, so the
   * file-backed part depends on which of their pages happened to be touched.
   */
  readonly anonBytes: number;
}

/** ticksPerSecond is the kernel's USER_HZ, the unit of utime/stime. */
const ticksPerSecond = readTicksPerSecond();

function readTicksPerSecond(): number {
  const out = Bun.spawnSync(["getconf", "CLK_TCK"], { stdout: "pipe", stderr: "ignore" });
  const value = Number(out.stdout.toString().trim());
  // 100 is USER_HZ on every mainstream Linux build; getconf only confirms it.
  return Number.isFinite(value) && value > 0 ? value : 100;
}

/**
 * readMemory returns VmRSS and VmHWM of `pid`, or undefined once it has
 * exited: its /proc entry gone, or still there without memory lines (a
 * zombie, exited but not yet reaped), which would otherwise read as 0 bytes.
 */
export function readMemory(pid: number): ProcMemory | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch (e: unknown) {
    if (isGone(e)) return undefined;
    throw e;
  }
  if (!/^VmRSS:/m.test(text)) return undefined;
  return { rssBytes: kibField(text, "VmRSS") * 1024, hwmBytes: kibField(text, "VmHWM") * 1024, anonBytes: kibField(text, "RssAnon") * 1024 };
}

/** readCpuSeconds returns user+system CPU seconds `pid` has used, or undefined once it has exited. */
/**
 * readThreadCpuSeconds is the CPU time of `pid`'s live threads to the
 * nanosecond (the scheduler's own count, /proc/PID/task/TID/schedstat),
 * where readCpuSeconds counts in clock ticks of 10 ms: for comparing
 * figures of a few hundred ms. A thread that has exited is not counted;
 * Bun's threads live as long as the process. Undefined once the process is gone.
 */
export function readThreadCpuSeconds(pid: number): number | undefined {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch (e: unknown) {
    if (isGone(e)) return undefined;
    throw e;
  }
  let ns = 0;
  for (const tid of tids) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch (e: unknown) {
      // A thread that ended between the listing and the read ran no more.
      if (!isGone(e)) throw e;
    }
  }
  return ns / 1e9;
}

export function readCpuSeconds(pid: number): number | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch (e: unknown) {
    if (isGone(e)) return undefined;
    throw e;
  }
  // The command name (field 2) may hold spaces and parentheses: count
  // fields from the last ")". utime and stime are fields 14 and 15.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return (utime + stime) / ticksPerSecond;
}

function kibField(status: string, name: string): number {
  const match = new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status);
  return match?.[1] === undefined ? 0 : Number(match[1]);
}

/** isGone says whether reading /proc/<pid>/... failed because the process has exited. */
export function isGone(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === "ENOENT" || code === "ESRCH";
}
