import type { Clock, TimerHandle } from "../util/clock";
import { MinHeap } from "./min-heap";

/** One pending delayed add. */
interface WaitingEntry<T> {
  readonly item: T;
  /** Clock time (ms) at which the item is handed to `onReady`. */
  readonly readyAt: number;
  /** Insertion order; breaks ties so equal ready times come out FIFO. */
  readonly seq: number;
}

function earlier<T>(a: WaitingEntry<T>, b: WaitingEntry<T>): boolean {
  return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq);
}

/**
 * WaitingList holds items until their ready time and then hands each to
 * `onReady` once; it is the heart of client-go's delaying queue
 * (`waitingLoop`), with one clock timer for the earliest entry standing in
 * for the goroutine.
 */
export class WaitingList<T> {
  /**
   * Entries by ready time. May hold stale entries: an item whose ready time
   * was moved earlier leaves its old entry behind. An entry is live exactly
   * when `live.get(entry.item) === entry`; stale ones are skipped when they
   * surface, which is cheaper than deleting from the middle of the heap.
   */
  private readonly heap = new MinHeap<WaitingEntry<T>>(earlier);
  /** The one live entry per waiting item; an item waits at most once. */
  private readonly live = new Map<T, WaitingEntry<T>>();
  private seq = 0;
  /** The armed timer, if any; it fires at `timerAt`, never after the earliest live entry. */
  private timer: TimerHandle | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly onReady: (item: T) => void,
  ) {}

  /** The number of items waiting. */
  get length(): number {
    return this.live.size;
  }

  /**
   * Schedules `item` for `ms` from now. If it is already waiting with an
   * earlier or equal ready time, that one stands: a later retry must not
   * postpone work that was due sooner (client-go `insert`).
   */
  addAfter(item: T, ms: number): void {
    if (this.stopped) return;
    const readyAt = this.clock.monotonic() + ms;
    const existing = this.live.get(item);
    if (existing !== undefined && existing.readyAt <= readyAt) return;
    const entry: WaitingEntry<T> = { item, readyAt, seq: this.seq++ };
    this.live.set(item, entry);
    this.heap.push(entry);
    this.arm();
  }

  /** Drops every waiting item and the timer; later `addAfter`s are ignored. */
  stop(): void {
    this.stopped = true;
    this.disarm();
    this.heap.clear();
    this.live.clear();
  }

  /** Makes sure a timer fires no later than the earliest live entry. */
  private arm(): void {
    const head = this.peekLive();
    if (head === undefined) {
      this.disarm();
      return;
    }
    if (this.timer !== undefined && this.timerAt <= head.readyAt) return;
    this.disarm();
    this.timerAt = head.readyAt;
    this.timer = this.clock.setTimeout(
      () => this.fire(),
      Math.max(0, head.readyAt - this.clock.monotonic()),
    );
  }

  private disarm(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    // Re-read the time rather than trusting the timer: timers may fire late
    // (a busy event loop) or early (delays clamped to the 32-bit maximum).
    const now = this.clock.monotonic();
    for (let head = this.peekLive(); head !== undefined && head.readyAt <= now; head = this.peekLive()) {
      this.heap.pop();
      this.live.delete(head.item);
      this.onReady(head.item);
      if (this.stopped) return;
    }
    this.arm();
  }

  /** Discards stale entries at the top and returns the earliest live one. */
  private peekLive(): WaitingEntry<T> | undefined {
    for (let head = this.heap.peek(); head !== undefined; head = this.heap.peek()) {
      if (this.live.get(head.item) === head) return head;
      this.heap.pop();
    }
    return undefined;
  }
}
