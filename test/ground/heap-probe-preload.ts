/**
 * heap-probe-preload is loaded with `bun --preload` in front of src/entry.ts
 * by bench/memory-probe.ts and by the soak (SOAK_HEAP_PROBE=1): on SIGUSR2 it
 * runs a full GC and appends one JSON line to $HEAP_PROBE_OUT with JSC's heap
 * statistics, live timers, mimalloc's commit and /proc/self/status memory
 * before and after the GC, so that live heap bytes per cached object can be
 * told apart from garbage the process has not handed back.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { heapStats, memoryUsage } from "bun:jsc";

const out = process.env["HEAP_PROBE_OUT"];
if (out !== undefined && out !== "") {
  const kib = (status: string, name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0) * 1024;
  process.on("SIGUSR2", () => {
    const pre = readFileSync("/proc/self/status", "utf8");
    const preStats = heapStats();
    const preCommit = memoryUsage().currentCommit;
    const started = performance.now();
    Bun.gc(true);
    const gcMs = performance.now() - started;
    const stats = heapStats();
    const status = readFileSync("/proc/self/status", "utf8");
    const types = Object.entries(stats.objectTypeCounts).sort((a, b) => b[1] - a[1]).slice(0, 25);
    appendFileSync(
      out,
      `${JSON.stringify({
        pid: process.pid,
        atMs: Date.now(),
        preHeapSize: preStats.heapSize,
        preHeapCapacity: preStats.heapCapacity,
        preCommit,
        preRss: kib(pre, "VmRSS"),
        preAnon: kib(pre, "RssAnon"),
        gcMs,
        heapSize: stats.heapSize,
        heapCapacity: stats.heapCapacity,
        extraMemorySize: stats.extraMemorySize,
        objectCount: stats.objectCount,
        // Live timers (setTimeout and setInterval alike are "Timeout" objects): Bun counts no active handles, the heap does.
        timers: stats.objectTypeCounts["Timeout"] ?? 0,
        commit: memoryUsage().currentCommit,
        rss: kib(status, "VmRSS"),
        anon: kib(status, "RssAnon"),
        types,
      })}\n`,
    );
  });
}
