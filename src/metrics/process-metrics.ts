import type { Registry } from "prom-client";
import registerCpuTotal from "prom-client/lib/metrics/processCpuTotal.js";
import registerMaxFileDescriptors from "prom-client/lib/metrics/processMaxFileDescriptors.js";
import registerMemory from "prom-client/lib/metrics/osMemoryHeap.js";
import registerOpenFileDescriptors from "prom-client/lib/metrics/processOpenFileDescriptors.js";
import registerStartTime from "prom-client/lib/metrics/processStartTime.js";

/**
 * registerProcessMetrics adds the `process_*` family that Go sidecars export
 * through client_golang's process collector: `process_cpu_seconds_total`
 * (and its user/system split), `process_start_time_seconds`,
 * `process_resident_memory_bytes`, `process_virtual_memory_bytes`,
 * `process_heap_bytes`, `process_open_fds` and `process_max_fds`. On Linux
 * they are read from /proc/self at scrape time, which works unchanged in
 * the compiled binary.
 *
 * Only these collectors are taken from prom-client's defaults: under Bun its
 * `nodejs_heap_space_*` and `nodejs_active_*` gauges read zeros from Bun's
 * V8 stand-ins, and its event-loop-lag monitor samples every 10 ms for the
 * life of the process.
 */
export function registerProcessMetrics(registry: Registry): void {
  for (const register of [registerCpuTotal, registerStartTime, registerMemory, registerOpenFileDescriptors, registerMaxFileDescriptors]) {
    register(registry);
  }
}
