/** Options for {@link IdleCollector}. */
export interface IdleCollectorOptions {
  /** Changes since the last collection that make the next one worth its pause. Default 200. */
  readonly minChanges?: number;
  /** How often activity is checked; a collection runs after one whole period without changes. Default 1000 ms. */
  readonly periodMs?: number;
  /** Runs the collection. Default: a full, synchronous GC (`Bun.gc(true)`), which also has mimalloc give back what it can. */
  readonly collect?: () => void;
}

/** resolveIdleCollectorOptions fills the defaults of every optional field. */
function resolveIdleCollectorOptions(options: IdleCollectorOptions): Required<IdleCollectorOptions> {
  return {
    minChanges: options.minChanges ?? 200,
    periodMs: options.periodMs ?? 1000,
    collect: options.collect ?? (() => Bun.gc(true)),
  };
}

/**
 * IdleCollector runs a full garbage collection once a burst of cache
 * changes is over: after the first list, a relist, or hundreds of attaches.
 * Each burst parses thousands of JSON documents (list pages, watch events,
 * API responses) whose garbage JavaScriptCore otherwise collects late and
 * in part, so the process would keep the burst's peak resident for minutes.
 * One collection in the first quiet second returns it at once, and costs a
 * pause (tens of ms at 10,000 cached objects) only when nothing is waiting.
 *
 * Invariant: `changes` counts the changes noted since the last collection;
 * `changesAtLastTick` is its value at the previous tick, so a tick that
 * finds them equal has seen a whole quiet period.
 */
export class IdleCollector {
  private readonly minChanges: number;
  private readonly periodMs: number;
  private readonly collect: () => void;
  private changes = 0;
  private changesAtLastTick = 0;

  constructor(options: IdleCollectorOptions = {}) {
    ({ minChanges: this.minChanges, periodMs: this.periodMs, collect: this.collect } = resolveIdleCollectorOptions(options));
  }

  /** note records one change (an object added, updated or deleted in a cache). */
  note(): void {
    this.changes++;
  }

  /** tick is called every period; it collects when enough changes came and none since the last tick. Returns whether it collected. */
  tick(): boolean {
    const quiet = this.changes === this.changesAtLastTick;
    this.changesAtLastTick = this.changes;
    if (!quiet || this.changes < this.minChanges) return false;
    this.changes = 0;
    this.changesAtLastTick = 0;
    this.collect();
    return true;
  }

  /** run ticks every period until `signal` aborts; the timer does not keep the process alive. */
  run(signal: AbortSignal): void {
    const timer = setInterval(() => this.tick(), this.periodMs);
    timer.unref();
    signal.addEventListener("abort", () => clearInterval(timer), { once: true });
  }
}
