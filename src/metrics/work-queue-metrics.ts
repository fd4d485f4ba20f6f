import type { Counter, Gauge, Histogram } from "prom-client";
import type { WorkQueueObserver } from "./work-queue-observer";

/** The `workqueue_*` families that count events, shared by every queue. */
export interface WorkQueueFamilies {
  readonly depth: Gauge<"name">;
  readonly adds: Counter<"name">;
  readonly queueDuration: Histogram<"name">;
  readonly workDuration: Histogram<"name">;
  readonly retries: Counter<"name">;
}

/**
 * PrometheusWorkQueueMetrics feeds one queue's events into the `workqueue_*`
 * families under `name`, as client-go's `defaultQueueMetrics` does. Depth
 * is counted from events as there: +1 when an item becomes dirty, -1 when a
 * worker takes it, so an item re-added while a worker holds it counts
 * (client-go's depth is the number of dirty items, not the queue's length).
 * Every series exists from the start at zero, as client-go's
 * `WithLabelValues` creates it with the queue.
 */
export class PrometheusWorkQueueMetrics implements WorkQueueObserver {
  private readonly depth: Gauge.Internal<"name">;
  private readonly adds: Counter.Internal;
  private readonly queueDuration: Histogram.Internal<"name">;
  private readonly workDuration: Histogram.Internal<"name">;
  private readonly retries: Counter.Internal;

  constructor(name: string, families: WorkQueueFamilies) {
    const labels = { name };
    families.depth.set(labels, 0);
    families.adds.inc(labels, 0);
    families.retries.inc(labels, 0);
    families.queueDuration.zero(labels);
    families.workDuration.zero(labels);
    this.depth = families.depth.labels(labels);
    this.adds = families.adds.labels(labels);
    this.queueDuration = families.queueDuration.labels(labels);
    this.workDuration = families.workDuration.labels(labels);
    this.retries = families.retries.labels(labels);
  }

  add(): void {
    this.adds.inc();
    this.depth.inc();
  }

  get(queuedSeconds: number): void {
    this.depth.dec();
    this.queueDuration.observe(queuedSeconds);
  }

  done(processingSeconds: number): void {
    this.workDuration.observe(processingSeconds);
  }

  retry(): void {
    this.retries.inc();
  }
}
