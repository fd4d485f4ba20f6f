// From its own module, not prom-client's index: see prom-client-metric-classes.d.ts.
import Registry from "prom-client/lib/registry.js";
import type { WorkQueueObserver } from "./work-queue-observer";
import { CsiOperationMetrics } from "./csi-operation-metrics";
import { KubeRequestMetrics } from "./kube-request-metrics";
import { counterFrom, gaugeFrom, histogramFrom } from "./metric-builders";
import { metricTable } from "./metric-table";
import { registerProcessMetrics } from "./process-metrics";
import { PrometheusWorkQueueMetrics, type WorkQueueFamilies } from "./work-queue-metrics";

/** The queue state the scrape-time gauges read; {@link WorkQueue} has it. */
export interface ObservedWorkQueue {
  readonly name: string;
  unfinishedWorkSeconds(): number;
  longestRunningProcessorSeconds(): number;
  oldestWaiting(): { seconds: number } | undefined;
}

/**
 * The leader election state `leader_election_master_status` reads when
 * scraped: its `name` label and value. The elector's LeaderElectionStatus
 * has it; leader election never pushes into the metrics.
 */
export interface ObservedLeaderElection {
  readonly name: string;
  isLeader(): boolean;
}

/** Options for {@link MetricRegistry}. */
export interface MetricRegistryOptions {
  /** Export `process_*` (CPU, memory, start time, file descriptors). Default true; tests turn it off for exact output. */
  readonly processMetrics?: boolean;
  /**
   * The work queues whose `workqueue_*` series exist, at zero, from the
   * start: a standby builds its queues only once it leads, and the Go
   * standby (whose controller, queues included, exists before it leads)
   * exports them at zero, so per-pod panels show every replica. Default none.
   */
  readonly workQueueNames?: readonly string[];
}

/** resolveMetricRegistryOptions fills the defaults of every optional field. */
function resolveMetricRegistryOptions(options: MetricRegistryOptions): Required<MetricRegistryOptions> {
  return { processMetrics: options.processMetrics ?? true, workQueueNames: options.workQueueNames ?? [] };
}

/**
 * MetricRegistry holds every metric the attacher exports, built from
 * {@link metricTable}, and renders them in Prometheus' text format. It
 * exists only when the HTTP endpoint is on: without it no call is timed
 * and no series is kept.
 */
export class MetricRegistry {
  /** `csi_sidecar_operations_seconds`; the operation metrics interceptor reports here. */
  readonly csiOperations: CsiOperationMetrics;
  /** `rest_client_*`; the work client's requests report here. */
  readonly kubeRequests: KubeRequestMetrics;
  private readonly registry = new Registry();
  private readonly workQueueFamilies: WorkQueueFamilies;
  /** Every queue the gauges report, by name; undefined until the queue itself exists (then its gauges read 0). */
  private readonly queues = new Map<string, ObservedWorkQueue | undefined>();
  private readonly elections: ObservedLeaderElection[] = [];

  constructor(options: MetricRegistryOptions = {}) {
    const { registry, queues, elections } = this;
    this.csiOperations = new CsiOperationMetrics(registry);
    this.kubeRequests = new KubeRequestMetrics(registry);
    this.workQueueFamilies = {
      depth: gaugeFrom(metricTable.workQueueDepth, registry),
      adds: counterFrom(metricTable.workQueueAdds, registry),
      queueDuration: histogramFrom(metricTable.workQueueQueueDuration, registry),
      workDuration: histogramFrom(metricTable.workQueueWorkDuration, registry),
      retries: counterFrom(metricTable.workQueueRetries, registry),
    };
    // client-go refreshes these every 500 ms from a goroutine; reading them
    // when scraped gives the same values without a timer.
    gaugeFrom(metricTable.workQueueUnfinishedWork, registry, (gauge) => {
      for (const [name, queue] of queues) gauge.set({ name }, queue?.unfinishedWorkSeconds() ?? 0);
    });
    gaugeFrom(metricTable.workQueueLongestRunningProcessor, registry, (gauge) => {
      for (const [name, queue] of queues) gauge.set({ name }, queue?.longestRunningProcessorSeconds() ?? 0);
    });
    gaugeFrom(metricTable.workQueueOldestWaiting, registry, (gauge) => {
      for (const [name, queue] of queues) gauge.set({ name }, queue?.oldestWaiting()?.seconds ?? 0);
    });
    gaugeFrom(metricTable.leaderElectionMasterStatus, registry, (gauge) => {
      for (const election of elections) gauge.set({ name: election.name }, election.isLeader() ? 1 : 0);
    });
    const resolved = resolveMetricRegistryOptions(options);
    if (resolved.processMetrics) registerProcessMetrics(registry);
    for (const name of resolved.workQueueNames) {
      // Creating the queue's event sink creates its counted series at zero.
      this.workQueueMetrics(name);
      queues.set(name, undefined);
    }
  }

  /** workQueueMetrics returns the event sink for the queue named `name`; pass it to the queue's constructor. */
  workQueueMetrics(name: string): WorkQueueObserver {
    return new PrometheusWorkQueueMetrics(name, this.workQueueFamilies);
  }

  /** watchQueue adds `queue` to the gauges read at scrape time (unfinished work, longest running processor, oldest waiting). */
  watchQueue(queue: ObservedWorkQueue): void {
    this.queues.set(queue.name, queue);
  }

  /**
   * watchLeaderElection exports `leader_election_master_status{name}`: 1
   * while this process holds the Lease, 0 while it stands by (client-go's
   * leaderOn/leaderOff), read when scraped. Without leader election there
   * is no series, as upstream. csi-lib-utils leaves client-go's
   * LeaderElectionConfig.Name empty, so upstream's series is `{name=""}`;
   * the elector chooses the name it reports.
   */
  watchLeaderElection(election: ObservedLeaderElection): void {
    this.elections.push(election);
  }

  /** The Content-Type of {@link render}'s output (text format 0.0.4). */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** render returns every metric in Prometheus' text exposition format. */
  render(): Promise<string> {
    return this.registry.metrics();
  }
}
