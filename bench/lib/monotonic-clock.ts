/**
 * monotonicSeconds reads CLOCK_MONOTONIC, the clock JavaScriptCore stamps
 * its JIT dump with and `perf record -k mono` stamps samples with, so that
 * bench/jit-profile.ts can mark its phases on the same clock as both.
 * Neither Date.now() (the wall clock) nor Bun's process.hrtime and
 * Bun.nanoseconds() (counted from the process's start) is that clock, so
 * it is read from libc.
 */
import { dlopen, FFIType, ptr } from "bun:ffi";

const clockMonotonic = 1;
let clockGettime: ((clock: number, timespec: number) => number) | undefined;
const timespec = new BigInt64Array(2);

export function monotonicSeconds(): number {
  if (clockGettime === undefined) {
    const libc = dlopen("libc.so.6", { clock_gettime: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 } });
    clockGettime = (clock, at) => libc.symbols.clock_gettime(clock, at);
  }
  if (clockGettime(clockMonotonic, ptr(timespec)) !== 0) throw new Error("clock_gettime(CLOCK_MONOTONIC) failed");
  return Number(timespec[0]) + Number(timespec[1]) / 1e9;
}
