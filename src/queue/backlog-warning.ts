import type { Logger } from "../log/logger";
import { type Clock, realClock, type TimerHandle } from "../util/clock";

/** The queue state a backlog check reads; {@link WorkQueue} has it. */
export interface BacklogSource {
  readonly name: string;
  /** Items queued and not yet taken by a worker. */
  len(): number;
  oldestWaiting(): { item: unknown; seconds: number } | undefined;
}

/** Options for {@link BacklogWarning}. */
export interface BacklogWarningOptions {
  /** The queues to watch. Required. */
  readonly queues: readonly BacklogSource[];
  readonly log: Logger;
  /**
   * Warn when an item has waited this long for a worker. Default 60 s: by
   * then kubelet has spent half of its 2-minute wait for the attachment,
   * so the workers are not keeping up.
   */
  readonly thresholdMs?: number;
  /** How often the queues are looked at. Default 10 s. */
  readonly checkIntervalMs?: number;
  /** At most one warning per queue this often, however long the backlog lasts. Default 5 min. */
  readonly repeatIntervalMs?: number;
  /** Default: {@link realClock}. */
  readonly clock?: Clock;
}

interface ResolvedBacklogWarningOptions {
  readonly queues: readonly BacklogSource[];
  readonly log: Logger;
  readonly thresholdMs: number;
  readonly checkIntervalMs: number;
  readonly repeatIntervalMs: number;
  readonly clock: Clock;
}

function resolveBacklogWarningOptions(options: BacklogWarningOptions): ResolvedBacklogWarningOptions {
  return {
    queues: options.queues,
    log: options.log,
    thresholdMs: options.thresholdMs ?? 60_000,
    checkIntervalMs: options.checkIntervalMs ?? 10_000,
    repeatIntervalMs: options.repeatIntervalMs ?? 300_000,
    clock: options.clock ?? realClock,
  };
}

/**
 * BacklogWarning logs a warning when an item has waited in a work queue
 * longer than a threshold: the workers are all busy (hung driver calls, too
 * few `--worker-threads`) and attaches are queuing up. Upstream gives no
 * sign of this but metrics; operators asked for one (external-attacher
 * #706, #733). One line per queue at most every `repeatIntervalMs`, so a
 * long backlog does not flood the log.
 */
export class BacklogWarning {
  private readonly options: ResolvedBacklogWarningOptions;
  /** When each queue last warned, by queue name. */
  private readonly lastWarned = new Map<string, number>();

  constructor(options: BacklogWarningOptions) {
    this.options = resolveBacklogWarningOptions(options);
  }

  /** run checks every `checkIntervalMs` until `signal` aborts. */
  run(signal: AbortSignal): void {
    const { clock, checkIntervalMs } = this.options;
    if (signal.aborted) return;
    let timer: TimerHandle | undefined;
    const arm = () => {
      timer = clock.setTimeout(() => {
        this.check();
        arm();
      }, checkIntervalMs);
      // A pending check must not keep the process alive on its own.
      if (typeof timer === "object") timer.unref();
    };
    signal.addEventListener("abort", () => timer !== undefined && clock.clearTimeout(timer), { once: true });
    arm();
  }

  /** check warns about every queue whose oldest item is over the threshold, unless that queue warned recently. */
  check(): void {
    const { log, clock, thresholdMs, repeatIntervalMs } = this.options;
    for (const queue of this.options.queues) {
      const oldest = queue.oldestWaiting();
      if (oldest === undefined || oldest.seconds * 1000 < thresholdMs) continue;
      const now = clock.monotonic();
      const last = this.lastWarned.get(queue.name);
      if (last !== undefined && now - last < repeatIntervalMs) continue;
      this.lastWarned.set(queue.name, now);
      log.warn("Work queue item has waited longer than the threshold for a worker", {
        queue: queue.name,
        item: oldest.item,
        waitingSeconds: Math.round(oldest.seconds),
        thresholdSeconds: thresholdMs / 1000,
        queued: queue.len(),
      });
    }
  }
}
