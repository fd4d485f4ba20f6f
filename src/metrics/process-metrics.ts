import { readFileSync } from "node:fs";
import type { Registry } from "prom-client";
import Counter from "prom-client/lib/counter.js";
import registerMaxFileDescriptors from "prom-client/lib/metrics/processMaxFileDescriptors.js";
import registerOpenFileDescriptors from "prom-client/lib/metrics/processOpenFileDescriptors.js";
import registerStartTime from "prom-client/lib/metrics/processStartTime.js";
import { readOwnMemoryLimit } from "../util/cgroup-memory-limit";
import { gaugeFrom } from "./metric-builders";
import { metricTable } from "./metric-table";

/**
 * registerProcessMetrics adds the `process_*` family that Go sidecars export
 * through client_golang's process collector: `process_cpu_seconds_total`
 * (and its user/system split, as prom-client names them), `process_start_time_seconds`,
 * `process_resident_memory_bytes`, `process_virtual_memory_bytes`,
 * `process_open_fds` and `process_max_fds`, and the attacher's own memory
 * gauges (anonymous memory, the JavaScript heap, the cgroup's limit). On
 * Linux they are read from /proc/self at scrape time, which works unchanged
 * in the compiled binary.
 *
 * The CPU counters are ours (registerCpuSeconds): prom-client's collector
 * loads @opentelemetry/api for exemplars the attacher never asks for, a
 * module every start with --http-endpoint paid for. The other collectors
 * come from prom-client's defaults; only these: under Bun its
 * `nodejs_heap_space_*` and `nodejs_active_*` gauges read zeros from Bun's
 * V8 stand-ins, its event-loop-lag monitor samples every 10 ms for the
 * life of the process, and its memory collector's `process_heap_bytes` is
 * VmData (see metric-table.ts).
 */
export function registerProcessMetrics(registry: Registry): void {
  registerCpuSeconds(registry);
  for (const register of [registerStartTime, registerOpenFileDescriptors, registerMaxFileDescriptors]) {
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

/**
 * registerCpuSeconds adds `process_cpu_user_seconds_total`,
 * `process_cpu_system_seconds_total` and their sum
 * `process_cpu_seconds_total`, with prom-client's names and help texts: at
 * each scrape, each counter grows by the CPU the process used since the
 * last one (process.cpuUsage(), in microseconds). The first scrape counts
 * from the process's start, as client_golang's collector does (it reads
 * /proc/self/stat); prom-client's counted from its own registration and
 * left start-up out.
 */
function registerCpuSeconds(registry: Registry): void {
  let last = { user: 0, system: 0 };
  const registers = [registry];
  // The first counter's collect sets all three, so one scrape reads one clock.
  new Counter({
    name: "process_cpu_user_seconds_total",
    help: "Total user CPU time spent in seconds.",
    registers,
    collect(this: Counter) {
      const now = process.cpuUsage();
      const userMicros = now.user - last.user;
      const systemMicros = now.system - last.system;
      last = now;
      this.inc(userMicros / 1e6);
      system.inc(systemMicros / 1e6);
      total.inc((userMicros + systemMicros) / 1e6);
    },
  });
  const system = new Counter({ name: "process_cpu_system_seconds_total", help: "Total system CPU time spent in seconds.", registers });
  const total = new Counter({ name: "process_cpu_seconds_total", help: "Total user and system CPU time spent in seconds.", registers });
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
