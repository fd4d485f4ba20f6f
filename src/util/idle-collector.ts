import { realClock, type Clock, type TimerHandle } from "./clock";

/** Options for {@link IdleCollector}. */
export interface IdleCollectorOptions {
  /** Changes since the last collection that make the next one worth its pause. Default 200. */
  readonly minChanges?: number;
  /** How often activity is checked; a collection runs after one whole period without changes. Default 1000 ms. */
  readonly periodMs?: number;
  /** Runs the collection. Default: a full, synchronous GC (`Bun.gc(true)`), which also has mimalloc give back what it can. */
  readonly collect?: () => void;
  /** Times the checks. Default realClock. */
  readonly clock?: Clock;
}

/** resolveIdleCollectorOptions fills the defaults of every optional field. */
function resolveIdleCollectorOptions(options: IdleCollectorOptions): Required<IdleCollectorOptions> {
  return {
    minChanges: options.minChanges ?? 200,
    periodMs: options.periodMs ?? 1000,
    collect: options.collect ?? (() => Bun.gc(true)),
    clock: options.clock ?? realClock,
  };
}

/**
 * IdleCollector runs a full garbage collection once a burst of cache
 * changes is over: after start-up (whatever the lists held), a relist, or
 * hundreds of attaches.
 * Each burst parses thousands of JSON documents (list pages, watch events,
 * API responses) whose garbage JavaScriptCore otherwise collects late and
 * in part, so the process would keep the burst's peak resident for minutes.
 * One collection in the first quiet second returns it at once, and costs a
 * pause (tens of ms at 10,000 cached objects) only when nothing is waiting.
 *
 * The check runs only while changes come in: the first change after a quiet
 * period arms it, and a check that finds a whole quiet period does not arm
 * another. An attacher with nothing to do is then never woken by it (a
 * timer of a second would wake it 86,400 times a day for nothing).
 *
 * Invariant: `changes` counts the changes noted since the last collection;
 * `changesAtLastTick` is its value at the previous tick, so a tick that
 * finds them equal has seen a whole quiet period. While running, `timer`
 * is armed exactly when no collection has run yet or a change came since
 * the last quiet tick.
 */
export class IdleCollector {
  private readonly minChanges: number;
  private readonly periodMs: number;
  private readonly collect: () => void;
  private readonly clock: Clock;
  private changes = 0;
  private changesAtLastTick = 0;
  private collectedOnce = false;
  private running = false;
  private timer: TimerHandle | undefined;

  constructor(options: IdleCollectorOptions = {}) {
    ({ minChanges: this.minChanges, periodMs: this.periodMs, collect: this.collect, clock: this.clock } = resolveIdleCollectorOptions(options));
  }

  /** note records one change (an object added, updated or deleted in a cache), and arms the check if it is running and idle. */
  note(): void {
    this.changes++;
    if (this.running && this.timer === undefined) this.arm();
  }

  /** tick is called a period after the last; it collects when none came since then and this is the first collection or enough changes came. Returns whether it collected. */
  tick(): boolean {
    const quiet = this.changes === this.changesAtLastTick;
    this.changesAtLastTick = this.changes;
    // The first quiet period collects whatever the changes: start-up's garbage (module set-up, TLS, the first lists) is there either way.
    if (!quiet || (this.collectedOnce && this.changes < this.minChanges)) return false;
    this.collectedOnce = true;
    this.changes = 0;
    this.changesAtLastTick = 0;
    this.collect();
    return true;
  }

  /** run ticks a period after changes, and every period while they go on, until `signal` aborts; the timer does not keep the process alive. */
  run(signal: AbortSignal): void {
    if (signal.aborted) return;
    this.running = true;
    if (!this.collectedOnce || this.changes !== this.changesAtLastTick) this.arm();
    signal.addEventListener(
      "abort",
      () => {
        this.running = false;
        if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
        this.timer = undefined;
      },
      { once: true },
    );
  }

  private arm(): void {
    const timer = this.clock.setTimeout(() => {
      const busy = this.changes !== this.changesAtLastTick;
      this.tick();
      this.timer = undefined;
      // A period with changes may be followed by a quiet one to collect in; a
      // quiet one has collected (the first always does) or waits for the next change.
      if (busy && this.running) this.arm();
    }, this.periodMs);
    if (typeof timer === "object") timer.unref();
    this.timer = timer;
  }
}
