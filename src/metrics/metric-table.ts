/**
 * The one table of every metric the attacher exports besides `process_*`:
 * name, kind, help, labels and buckets. The registry builds each metric
 * from its row, so a metric cannot exist half-defined.
 *
 * Names, help texts, labels and buckets are upstream's, so dashboards and
 * alerts written for the Go sidecar keep working:
 * - `csi_sidecar_operations_seconds`: csi-lib-utils `metrics/metrics.go`.
 * - `workqueue_*`: component-base `metrics/prometheus/workqueue/metrics.go`
 *   (values as client-go `util/workqueue/metrics.go` computes them).
 * - `leader_election_master_status`: component-base
 *   `metrics/prometheus/clientgo/leaderelection/metrics.go`.
 * - `rest_client_*`: component-base `metrics/prometheus/restclient/metrics.go`
 *   (client-go's request metrics; ours count the work client's requests,
 *   not leader election's).
 * component-base prefixes each help text with the metric's stability level
 * (`[ALPHA] `, `[BETA] `), so the texts here carry that prefix too.
 *
 * `csi_attacher_workqueue_oldest_waiting_seconds` is ours (upstream has no
 * backlog age): named like `workqueue_*` under the attacher's own prefix, so
 * it never collides with a future client-go metric. So are the memory rows
 * under `csi_attacher_`: what a dashboard and an alert need to tell a
 * growing heap from the binary's pages, and how close the limit is.
 *
 * `process_resident_memory_bytes` and `process_virtual_memory_bytes` are
 * client_golang's process collector's names and help texts; the rest of
 * `process_*` (CPU, start time, file descriptors) comes from prom-client's
 * collectors (process-metrics.ts). prom-client's `process_heap_bytes` is
 * left out: on Linux it reports VmData, which under Bun is the runtime's
 * reserved address space (~6 GiB next to a 58 MiB RSS), not a heap; the Go
 * sidecar has no such series either. `csi_attacher_javascript_heap_used_bytes`
 * says what the JavaScript heap holds.
 */

/** A metric's kind, as Prometheus' TYPE line says it. */
export type MetricKind = "counter" | "gauge" | "histogram";

/** One row of {@link metricTable}. */
export interface MetricDefinition {
  readonly kind: MetricKind;
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  /** Upper bounds of a histogram's buckets; only for kind "histogram". */
  readonly buckets?: readonly number[];
}

/** client-go's `ExponentialBuckets(10e-7, 10, 10)`: 1 µs to 1000 s, one bucket per decade. */
const workQueueBuckets = Array.from({ length: 10 }, (_, i) => Number(`1e${i - 6}`));

/** Every metric family, keyed by the name the code uses for it. */
export const metricTable = {
  csiOperations: {
    kind: "histogram",
    name: "csi_sidecar_operations_seconds",
    help: "[ALPHA] Container Storage Interface operation duration with gRPC error code status total",
    // `migrated` only for drivers that in-tree volumes migrate to (csi-lib-utils
    // WithMigration); the operation metrics drop it for every other driver.
    labelNames: ["driver_name", "grpc_status_code", "method_name", "migrated"],
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 25, 50, 120, 300, 600],
  },
  workQueueDepth: {
    kind: "gauge",
    name: "workqueue_depth",
    help: "[BETA] Current depth of workqueue",
    labelNames: ["name"],
  },
  workQueueAdds: {
    kind: "counter",
    name: "workqueue_adds_total",
    help: "[BETA] Total number of adds handled by workqueue",
    labelNames: ["name"],
  },
  workQueueQueueDuration: {
    kind: "histogram",
    name: "workqueue_queue_duration_seconds",
    help: "[BETA] How long in seconds an item stays in workqueue before being requested.",
    labelNames: ["name"],
    buckets: workQueueBuckets,
  },
  workQueueWorkDuration: {
    kind: "histogram",
    name: "workqueue_work_duration_seconds",
    help: "[BETA] How long in seconds processing an item from workqueue takes.",
    labelNames: ["name"],
    buckets: workQueueBuckets,
  },
  workQueueUnfinishedWork: {
    kind: "gauge",
    name: "workqueue_unfinished_work_seconds",
    help:
      "[BETA] How many seconds of work has done that is in progress and hasn't been observed by work_duration. " +
      "Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
    labelNames: ["name"],
  },
  workQueueLongestRunningProcessor: {
    kind: "gauge",
    name: "workqueue_longest_running_processor_seconds",
    help: "[BETA] How many seconds has the longest running processor for workqueue been running.",
    labelNames: ["name"],
  },
  workQueueRetries: {
    kind: "counter",
    name: "workqueue_retries_total",
    help: "[BETA] Total number of retries handled by workqueue",
    labelNames: ["name"],
  },
  workQueueOldestWaiting: {
    kind: "gauge",
    name: "csi_attacher_workqueue_oldest_waiting_seconds",
    help: "How many seconds the item that has waited longest in workqueue has been waiting for a worker; 0 when none is waiting.",
    labelNames: ["name"],
  },
  processResidentMemory: {
    kind: "gauge",
    name: "process_resident_memory_bytes",
    help: "Resident memory size in bytes.",
    labelNames: [],
  },
  processVirtualMemory: {
    kind: "gauge",
    name: "process_virtual_memory_bytes",
    help: "Virtual memory size in bytes.",
    labelNames: [],
  },
  residentAnonymousMemory: {
    kind: "gauge",
    name: "csi_attacher_resident_anonymous_memory_bytes",
    help: "Anonymous resident memory in bytes (RssAnon of /proc/self/status): what the process allocated, the JavaScript heap included, without the binary's file-backed pages.",
    labelNames: [],
  },
  javascriptHeapUsed: {
    kind: "gauge",
    name: "csi_attacher_javascript_heap_used_bytes",
    help: "Bytes the JavaScript heap holds: live objects and garbage not yet collected (process.memoryUsage().heapUsed). Exported in place of process_heap_bytes, which under Bun reports reserved address space.",
    labelNames: [],
  },
  memoryLimit: {
    kind: "gauge",
    name: "csi_attacher_memory_limit_bytes",
    help: "The memory limit of the attacher's cgroup (the container's limits.memory), read at start-up; no sample when there is none.",
    labelNames: [],
  },
  kubeRequests: {
    kind: "counter",
    name: "rest_client_requests_total",
    help: "[ALPHA] Number of HTTP requests, partitioned by status code, method, and host.",
    labelNames: ["code", "method", "host"],
  },
  kubeRateLimiterDuration: {
    kind: "histogram",
    name: "rest_client_rate_limiter_duration_seconds",
    help: "[ALPHA] Client side rate limiter latency in seconds. Broken down by verb, and host.",
    labelNames: ["verb", "host"],
    buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60],
  },
  leaderElectionMasterStatus: {
    kind: "gauge",
    name: "leader_election_master_status",
    help:
      "[ALPHA] Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. " +
      "'name' is the string used to identify the lease. Please make sure to group by name.",
    labelNames: ["name"],
  },
} as const satisfies Record<string, MetricDefinition>;
