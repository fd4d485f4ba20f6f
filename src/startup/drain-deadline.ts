import type { Logger } from "../log/logger";
import { realClock, type Clock, type TimerHandle } from "../util/clock";

/** Time allowed after --timeout for the last operations' API writes when shutting down. */
const shutdownGraceMs = 5_000;

export interface DrainDeadlineOptions {
  /** --timeout: how long an in-flight CSI call may still take once the work was told to stop. */
  readonly timeoutMs: number;
  /** Where a drain that ran out is told. */
  readonly log: Logger;
  /** Ends the process with a code: main.ts's, the one place that exits. */
  readonly exit: (code: number) => never;
  /** Time source. Default the real clock. */
  readonly clock?: Clock;
}

/**
 * DrainDeadline bounds the drain once the work was told to stop (a signal,
 * or the driver lost): in-flight CSI calls end within --timeout and the API
 * writes that record their outcome follow at once, so past that and a grace
 * period something is stuck, and the process exits 1.
 *
 * Once the work has drained the deadline is off. What the process may still
 * wait for then, a lost driver's meaning (up to the signals' spread, 10 s),
 * is no operation: with --timeout under 5 s the deadline came first, and a
 * driver lost under a running attacher ended with "In-flight operations did
 * not finish in time" instead of "Lost connection to CSI driver, exiting",
 * and no termination message.
 */
export class DrainDeadline {
  private readonly clock: Clock;
  private timer: TimerHandle | undefined;
  private armed = false;

  constructor(private readonly options: DrainDeadlineOptions) {
    this.clock = options.clock ?? realClock;
  }

  /** How long the drain may take: --timeout and the grace period. */
  get ms(): number {
    return this.options.timeoutMs + shutdownGraceMs;
  }

  /** start arms the deadline, once: later calls change nothing. */
  start(): void {
    if (this.armed) return;
    this.armed = true;
    this.timer = this.clock.setTimeout(() => {
      this.options.log.error("In-flight operations did not finish in time, exiting", { drainTimeout: `${this.ms}ms` });
      this.options.exit(1);
    }, this.ms);
    // The deadline alone must not keep the process alive.
    if (typeof this.timer === "object") this.timer.unref();
  }

  /** drained takes the deadline off, and keeps it off: the work has stopped. */
  drained(): void {
    this.armed = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}
