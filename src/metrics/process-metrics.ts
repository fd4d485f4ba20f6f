import { readFileSync } from "node:fs";
import type { Registry } from "prom-client";
import registerCpuTotal from "prom-client/lib/metrics/processCpuTotal.js";
import registerMaxFileDescriptors from "prom-client/lib/metrics/processMaxFileDescriptors.js";
import registerOpenFileDescriptors from "prom-client/lib/metrics/processOpenFileDescriptors.js";
import registerStartTime from "prom-client/lib/metrics/processStartTime.js";
import { readOwnMemoryLimit } from "../util/cgroup-memory-limit";
import { gaugeFrom } from "./metric-builders";
import { metricTable } from "./metric-table";

/**
 * registerProcessMetrics adds the `process_*` family that Go sidecars export
 * through client_golang's process collector: `process_cpu_seconds_total`
 * (and its user/system split), `process_start_time_seconds`,
 * `process_resident_memory_bytes`, `process_virtual_memory_bytes`,
 * `process_open_fds` and `process_max_fds`, and the attacher's own memory
 * gauges (anonymous memory, the JavaScript heap, the cgroup's limit). On
 * Linux they are read from /proc/self at scrape time, which works unchanged
 * in the compiled binary.
 *
 * Only these collectors are taken from prom-client's defaults: under Bun its
 * `nodejs_heap_space_*` and `nodejs_active_*` gauges read zeros from Bun's
 * V8 stand-ins, its event-loop-lag monitor samples every 10 ms for the
 * life of the process, and its memory collector's `process_heap_bytes` is
 * VmData (see metric-table.ts).
 */
export function registerProcessMetrics(registry: Registry): void {
  for (const register of [registerCpuTotal, registerStartTime, registerOpenFileDescriptors, registerMaxFileDescriptors]) {
    register(registry);
  }
  // A gauge without labels always has a sample (0 until set), and a 0
  // would read as "no memory" or, for the limit, make every ratio infinite:
  // a gauge whose source is missing (no /proc off Linux, no cgroup limit) is
  // not registered at all. Neither source appears or vanishes while the
  // process runs.
  if (procStatusBytes("VmRSS") !== undefined) {
    // A few microseconds each: three reads of /proc/self/status per scrape cost less than sharing one.
    gaugeFrom(metricTable.processResidentMemory, registry, (gauge) => gauge.set(procStatusBytes("VmRSS") ?? 0));
    gaugeFrom(metricTable.processVirtualMemory, registry, (gauge) => gauge.set(procStatusBytes("VmSize") ?? 0));
    gaugeFrom(metricTable.residentAnonymousMemory, registry, (gauge) => gauge.set(procStatusBytes("RssAnon") ?? 0));
  }
  gaugeFrom(metricTable.javascriptHeapUsed, registry, (gauge) => gauge.set(process.memoryUsage().heapUsed));
  const limitBytes = readOwnMemoryLimit()?.limitBytes;
  if (limitBytes !== undefined) gaugeFrom(metricTable.memoryLimit, registry, (gauge) => gauge.set(limitBytes));
}

/** procStatusBytes reads one `Name:\t  1234 kB` line of /proc/self/status; undefined off Linux, where there is no such file. */
function procStatusBytes(field: "VmRSS" | "VmSize" | "RssAnon"): number | undefined {
  let text: string;
  try {
    text = readFileSync("/proc/self/status", "utf8");
  } catch (e: unknown) {
    void e;
    return undefined;
  }
  const kib = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(text)?.[1];
  return kib === undefined ? undefined : Number(kib) * 1024;
}
