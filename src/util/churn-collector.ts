/** Options for {@link ChurnCollector}. */
export interface ChurnCollectorOptions {
  /** Changes since the last collection that make the next one worth its pause. Default 200. */
  readonly minChanges?: number;
  /** How often activity is checked; a collection runs after one whole period without changes. Default 1000 ms. */
  readonly periodMs?: number;
  /** Under churn that never pauses, the longest time between collections (when enough changes came). Default 60,000 ms. */
  readonly busyIntervalMs?: number;
  /** Runs the collection. Default: a full, synchronous GC (`Bun.gc(true)`), which also has mimalloc give back what it can. */
  readonly collect?: () => void;
}

/**
 * ChurnCollector runs a full garbage collection after enough cache changes:
 * once a burst is over (the first list, a relist, hundreds of attaches), or
 * once a minute while VAs churn without a pause.
 *
 * Each change parses JSON documents (list pages, watch events, API
 * responses) whose garbage JavaScriptCore collects late and in part; the
 * native memory behind it (response buffers, strings) is freed only with
 * the objects, and JSC's heuristics see the small JS heap, not that memory.
 * After a burst, one collection in the first quiet second returns the
 * peak at once, and its pause (tens of ms at 10,000 cached objects) comes
 * when nothing is waiting. Under steady churn no second is quiet, and
 * without the minute's bound resident memory crept up for the whole hour
 * of the soak (test/soak/); a collection a minute pauses tens of ms.
 *
 * Invariant: `changes` counts the changes noted since the last collection;
 * `changesAtLastTick` is its value at the previous tick, so a tick that
 * finds them equal has seen a whole quiet period; `ticksSinceCollection`
 * counts ticks since the last collection (or the start).
 */
export class ChurnCollector {
  private readonly minChanges: number;
  private readonly periodMs: number;
  private readonly busyIntervalMs: number;
  private readonly collect: () => void;
  private changes = 0;
  private changesAtLastTick = 0;
  private ticksSinceCollection = 0;

  constructor(options: ChurnCollectorOptions = {}) {
    this.minChanges = options.minChanges ?? 200;
    this.periodMs = options.periodMs ?? 1000;
    this.busyIntervalMs = options.busyIntervalMs ?? 60_000;
    this.collect = options.collect ?? (() => Bun.gc(true));
  }

  /** note records one change (an object added, updated or deleted in a cache). */
  note(): void {
    this.changes++;
  }

  /**
   * tick is called every period; it collects when enough changes came and
   * either none since the last tick or the busy interval has passed since
   * the last collection. Returns whether it collected.
   */
  tick(): boolean {
    const quiet = this.changes === this.changesAtLastTick;
    this.changesAtLastTick = this.changes;
    this.ticksSinceCollection++;
    if (this.changes < this.minChanges) return false;
    const overdue = this.ticksSinceCollection * this.periodMs >= this.busyIntervalMs;
    if (!quiet && !overdue) return false;
    this.changes = 0;
    this.changesAtLastTick = 0;
    this.ticksSinceCollection = 0;
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
