import { type Clock, realClock } from "../util/clock";
import { Fifo } from "./fifo";
import { LaneFifo } from "./lane-fifo";
import { noopWorkQueueObserver, type WorkQueueObserver } from "../metrics/work-queue-observer";
import { ItemExponentialFailureRateLimiter, type RateLimiter } from "./rate-limiter";
import { WaitingList } from "./waiting-list";

/** Options for {@link WorkQueue}. */
export interface WorkQueueOptions<T> {
  /** Names the queue in metrics (`name` label) and logs. Required; no default. */
  name: string;
  /** Decides `addRateLimited` delays. Default: `new ItemExponentialFailureRateLimiter()` (1 s doubling to 5 min). */
  rateLimiter?: RateLimiter<T>;
  /** Source of time and timers. Default: {@link realClock}. */
  clock?: Clock;
  /** Receives add/get/done/retry events. Default: {@link noopWorkQueueObserver}. */
  metrics?: WorkQueueObserver;
  /**
   * Splits the queue into lanes served in turn (see {@link LaneFifo}) and
   * optionally caps how many workers each lane may hold at once.
   * Default: one lane without a cap, client-go's plain FIFO.
   */
  lanes?: WorkQueueLanes<T>;
}

/** WorkQueueLanes says how a {@link WorkQueue} sorts its items into lanes and what share of the workers each lane may take. */
export interface WorkQueueLanes<T> {
  /** How many lanes (at least 1). */
  readonly count: number;
  /** The lane of an item, 0 to count - 1; asked once each time the item is queued. */
  readonly of: (item: T) => number;
  /**
   * At most `maxProcessing[lane]` items of that lane are handed out and not
   * yet `done` at any time; while a lane is at its cap its items wait and
   * the other lanes' items go first. A lane without an entry has no cap.
   * A cap below 1 counts as 1, so no lane starves. Default: no caps.
   */
  readonly maxProcessing?: readonly number[];
}

interface ResolvedWorkQueueOptions<T> {
  name: string;
  rateLimiter: RateLimiter<T>;
  clock: Clock;
  metrics: WorkQueueObserver;
  lanes: WorkQueueLanes<T>;
}

function resolveWorkQueueOptions<T>(options: WorkQueueOptions<T>): ResolvedWorkQueueOptions<T> {
  return {
    name: options.name,
    rateLimiter: options.rateLimiter ?? new ItemExponentialFailureRateLimiter<T>(),
    clock: options.clock ?? realClock,
    metrics: options.metrics ?? noopWorkQueueObserver,
    lanes: options.lanes ?? { count: 1, of: () => 0 },
  };
}

/** A held item's bookkeeping: when a worker took it, and from which lane. */
interface Held {
  readonly startedAt: number;
  readonly lane: number;
}

/** What {@link WorkQueue.get} resolves to: an item to process, or word that the queue is shut down. */
export type WorkQueueGetResult<T> = { item: T; shutdown: false } | { shutdown: true };

/**
 * WorkQueue is client-go's rate-limited, delaying work queue with a promise
 * in place of the condition variable. Workers loop on `get`, process the
 * item, and always call `done`. Guarantees (from client-go `queue.go`):
 * items come out in FIFO order (within a lane, see `lanes`); an item is never handed to two workers at
 * once; adding an item that is already queued is a no-op; adding an item
 * that is being processed makes it come out once more after `done`. Beyond
 * client-go: a lane may be capped to a share of the workers, so the other
 * lanes always find one free (see {@link WorkQueueLanes.maxProcessing}).
 * Items are told apart as `Map` keys are (SameValueZero), so use strings
 * such as VolumeAttachment names.
 */
export class WorkQueue<T = string> {
  /** The queue's name, for metrics. */
  readonly name: string;
  private readonly rateLimiter: RateLimiter<T>;
  private readonly clock: Clock;
  private readonly metrics: WorkQueueObserver;

  // The three pieces of state below follow client-go's queue.go:
  //   queue ⊆ dirty, and no item is in queue twice;
  //   queue ∩ processing = ∅;
  //   an item in dirty but not in queue is in processing, and goes back
  //   into queue when its worker calls done.
  // So an item is owed or owned by a worker exactly when it is in
  // dirty ∪ processing, which is what `queuedOrProcessing` answers; an item
  // parked by `addAfter` is in neither until its time comes.
  // And for the lanes: heldPerLane[l] counts the items of `processing`
  // taken from lane l, and stays <= maxProcessing[l] until shutDown.
  /** The order items are handed out in. Every item here is also in `dirty` and not in `processing`. */
  private readonly queue: LaneFifo<T>;
  /**
   * Items that need processing. An item leaves `dirty` when a worker takes
   * it, so an add during processing lands here (and only here) and makes
   * `done` queue it again.
   */
  private readonly dirty = new Set<T>();
  /**
   * Items a worker holds right now, with the clock time it took them and
   * their lane. They may also be in `dirty`, but never in `queue`: that is
   * what keeps one item from two workers at once.
   */
  private readonly processing = new Map<T, Held>();
  /** How many items of each lane are in `processing`. */
  private readonly heldPerLane: number[];
  /** Each lane's cap on `heldPerLane` (Infinity: none). */
  private readonly maxHeldPerLane: number[];
  /**
   * Whether a lane may hand out an item now: below its cap, or any lane
   * once shutting down (workers then only call done). Undefined when no
   * lane has a cap, so the plain queue skips the check.
   */
  private readonly laneOpen: ((lane: number) => boolean) | undefined;
  /**
   * When each dirty item became dirty, for the time-in-queue metric. Its keys
   * are exactly `dirty`. An entry is only ever inserted with the clock's
   * current time and never updated, so the Map's insertion order is the
   * order items became dirty: the first entry has waited longest.
   */
  private readonly addTimes = new Map<T, number>();
  /**
   * Workers blocked in `get`, oldest first. Non-empty only while no item
   * of `queue` is in an open lane (one below its cap) and the queue is not
   * shutting down: every add, and every done that opens a lane, hands an
   * item to a waiter straight away.
   */
  private readonly waiters = new Fifo<(result: WorkQueueGetResult<T>) => void>();
  /** Items scheduled by `addAfter`, added when their time comes. */
  private readonly waiting: WaitingList<T>;
  private shutdownRequested = false;

  constructor(options: WorkQueueOptions<T>) {
    const resolved = resolveWorkQueueOptions(options);
    this.name = resolved.name;
    this.rateLimiter = resolved.rateLimiter;
    this.clock = resolved.clock;
    this.metrics = resolved.metrics;
    this.queue = new LaneFifo<T>(resolved.lanes.count, resolved.lanes.of);
    const laneCount = Math.max(1, resolved.lanes.count);
    this.heldPerLane = new Array<number>(laneCount).fill(0);
    this.maxHeldPerLane = Array.from({ length: laneCount }, (_, lane) => Math.max(1, resolved.lanes.maxProcessing?.[lane] ?? Number.POSITIVE_INFINITY));
    this.laneOpen = this.maxHeldPerLane.some((cap) => cap !== Number.POSITIVE_INFINITY)
      ? (lane) => this.shutdownRequested || (this.heldPerLane[lane] ?? 0) < (this.maxHeldPerLane[lane] ?? Number.POSITIVE_INFINITY)
      : undefined;
    this.waiting = new WaitingList<T>(this.clock, (item) => this.add(item));
  }

  /** Marks `item` as needing processing. Ignored after {@link shutDown}. */
  add(item: T): void {
    if (this.shutdownRequested) return;
    // Already due for processing: one pass will cover both adds.
    if (this.dirty.has(item)) return;
    this.metrics.add();
    this.dirty.add(item);
    if (!this.addTimes.has(item)) this.addTimes.set(item, this.clock.monotonic());
    // A worker holds it; done() will queue it, so no second worker gets it.
    if (this.processing.has(item)) return;
    this.queue.push(item);
    this.handOut();
  }

  /**
   * Waits for an item and marks it as processing; the caller must call
   * {@link done} with it. Waiting callers are served in FIFO order. After
   * {@link shutDown} the items still queued are handed out, lane caps
   * aside, then every call resolves to `{ shutdown: true }`.
   */
  get(): Promise<WorkQueueGetResult<T>> {
    const next = this.take();
    if (next !== undefined) return Promise.resolve(next);
    if (this.shutdownRequested) return Promise.resolve({ shutdown: true });
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /**
   * Marks `item` as no longer being processed; if it was added meanwhile it
   * is queued again. Calling it for an item nobody holds is a no-op (client-go
   * would queue a dirty item a second time).
   */
  done(item: T): void {
    const held = this.processing.get(item);
    if (held === undefined) return;
    this.processing.delete(item);
    this.heldPerLane[held.lane] = (this.heldPerLane[held.lane] ?? 1) - 1;
    this.metrics.done(this.secondsSince(held.startedAt));
    if (this.dirty.has(item)) this.queue.push(item);
    // Its lane may have been at its cap with items waiting behind it.
    this.handOut();
  }

  /**
   * Whether `item` waits to be handed out or a worker holds it (it is in
   * `dirty` or `processing`); an item parked by {@link addAfter} is neither
   * yet. Read-only: a caller uses it to leave alone an item whose current
   * state belongs to a worker, e.g. the reconciler with a VA that is being
   * attached.
   */
  queuedOrProcessing(item: T): boolean {
    return this.dirty.has(item) || this.processing.has(item);
  }

  /** The number of items queued and not yet taken by a worker (the depth). */
  len(): number {
    return this.queue.length;
  }

  /**
   * Stops accepting adds, drops pending `addAfter`s and wakes every waiting
   * {@link get} with `{ shutdown: true }`. Workers holding items still call
   * {@link done}.
   */
  shutDown(): void {
    this.shutdownRequested = true;
    this.waiting.stop();
    // Lanes held back by their caps are open now: what they hold goes out first.
    this.handOut();
    for (let wake = this.waiters.shift(); wake !== undefined; wake = this.waiters.shift()) {
      wake({ shutdown: true });
    }
  }

  /** Whether {@link shutDown} has been called. */
  shuttingDown(): boolean {
    return this.shutdownRequested;
  }

  /**
   * Adds `item` after `ms` milliseconds (at once if `ms <= 0`). If the item
   * is already waiting to be added sooner, the sooner time stands. Counts a
   * retry, as client-go's delaying queue does for every AddAfter.
   */
  addAfter(item: T, ms: number): void {
    if (this.shutdownRequested) return;
    this.metrics.retry();
    if (!(ms > 0)) {
      this.add(item);
      return;
    }
    this.waiting.addAfter(item, ms);
  }

  /** Adds `item` after the delay its rate limiter asks for, counting a retry. */
  addRateLimited(item: T): void {
    const delay = this.rateLimiter.when(item);
    if (this.shutdownRequested) return;
    this.addAfter(item, delay);
  }

  /** Clears `item`'s failure history in the rate limiter; call it when processing succeeded. */
  forget(item: T): void {
    this.rateLimiter.forget(item);
  }

  /** Total seconds that items now in processing have been held (`workqueue_unfinished_work_seconds`). */
  unfinishedWorkSeconds(): number {
    let total = 0;
    for (const held of this.processing.values()) total += this.secondsSince(held.startedAt);
    return total;
  }

  /** Seconds the longest-held item now in processing has been held, or 0 (`workqueue_longest_running_processor_seconds`). */
  longestRunningProcessorSeconds(): number {
    let longest = 0;
    for (const held of this.processing.values()) {
      longest = Math.max(longest, this.secondsSince(held.startedAt));
    }
    return longest;
  }

  /**
   * The item that has needed processing longest, and for how many seconds
   * (`csi_attacher_workqueue_oldest_waiting_seconds`), or undefined when no
   * item is waiting. An item counts as waiting from the add that made it
   * dirty until a worker takes it, including while another worker still
   * holds it; items parked by `addAfter` are not waiting yet.
   */
  oldestWaiting(): { item: T; seconds: number } | undefined {
    for (const [item, addedAt] of this.addTimes) return { item, seconds: this.secondsSince(addedAt) };
    return undefined;
  }

  /** Serves waiting getters while there are both getters and items in open lanes. */
  private handOut(): void {
    while (this.waiters.length > 0) {
      const next = this.take();
      if (next === undefined) return;
      this.waiters.shift()?.(next);
    }
  }

  /**
   * Moves the next item of an open lane from `queue` to `processing`, or
   * returns undefined when no open lane holds one. Done synchronously at
   * hand-out time, not when the awaiting worker resumes, so no add or get in
   * between can see the item as merely queued.
   */
  private take(): WorkQueueGetResult<T> | undefined {
    const item = this.queue.shift(this.laneOpen);
    if (item === undefined) return undefined;
    const lane = this.queue.servedLane;
    this.heldPerLane[lane] = (this.heldPerLane[lane] ?? 0) + 1;
    const now = this.clock.monotonic();
    this.processing.set(item, { startedAt: now, lane });
    this.dirty.delete(item);
    const addedAt = this.addTimes.get(item) ?? now;
    this.addTimes.delete(item);
    this.metrics.get((now - addedAt) / 1000);
    return { item, shutdown: false };
  }

  private secondsSince(time: number): number {
    return (this.clock.monotonic() - time) / 1000;
  }
}
