/**
 * WorkQueueObserver receives a queue's events, mirroring client-go's
 * `queueMetrics`: the provider turns them into the `workqueue_*` Prometheus
 * series. Durations are in seconds because Prometheus histograms are.
 * Depth is counted from `add` and `get`, as client-go counts it (dirty
 * items, including one re-added while a worker holds it). The time-based
 * gauges are read from the queue itself when scraped:
 * `unfinishedWorkSeconds()`, `longestRunningProcessorSeconds()`,
 * `oldestWaiting()`.
 */
export interface WorkQueueObserver {
  /** An item became dirty (`workqueue_adds_total`, depth + 1). */
  add(): void;
  /** A worker took an item that had waited `queuedSeconds` since it was added (`workqueue_queue_duration_seconds`, depth - 1). */
  get(queuedSeconds: number): void;
  /** A worker finished an item it had held for `processingSeconds` (`workqueue_work_duration_seconds`). */
  done(processingSeconds: number): void;
  /** An item was re-added by `addAfter` or `addRateLimited` (`workqueue_retries_total`; client-go counts every AddAfter). */
  retry(): void;
}

/** noopWorkQueueObserver discards every event; the default when no provider is given. */
export const noopWorkQueueObserver: WorkQueueObserver = {
  add() {},
  get() {},
  done() {},
  retry() {},
};
