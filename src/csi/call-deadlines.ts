/**
 * An item {@link CallDeadlines} expires: a call in flight. The links are
 * the queue's own (an item is in one queue at most); `expiresAt` is on
 * `performance.now()`'s clock.
 */
export interface Expiring {
  expiresAt: number;
  previousExpiring: Expiring | undefined;
  nextExpiring: Expiring | undefined;
  /** Called once, when the deadline has passed and the item was still in the queue. */
  expire(): void;
}

/** The items of one deadline length, oldest first: since they share the length, also in order of expiry. */
interface SameLengthDeadlines {
  first: Expiring | undefined;
  last: Expiring | undefined;
}

/**
 * CallDeadlines expires the calls of one transport with a single timer,
 * armed for the earliest deadline, rather than a timer a call.
 *
 * Why: a timer is a native-backed object that JSC's collector frees only
 * by a sweep (about 560 bytes of RSS each, measured), and nearly every call
 * ends long before its deadline (--timeout, 15 s by default); a burst of
 * a thousand attaches made two thousand of them. The attacher's calls use
 * a handful of deadline lengths, and calls of one length expire in the
 * order they started, so each length is a list, added at its end and
 * expired from its start, and a call that ends is unlinked in O(1).
 */
export class CallDeadlines {
  private readonly byLength = new Map<number, SameLengthDeadlines>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerDueAt = Infinity;
  private size = 0;

  /** add has `item.expire()` called `lengthMs` from now, unless it is removed first. */
  add(item: Expiring, lengthMs: number): void {
    item.expiresAt = performance.now() + lengthMs;
    let list = this.byLength.get(lengthMs);
    if (list === undefined) {
      list = { first: undefined, last: undefined };
      this.byLength.set(lengthMs, list);
    }
    item.previousExpiring = list.last;
    item.nextExpiring = undefined;
    if (list.last === undefined) list.first = item;
    else list.last.nextExpiring = item;
    list.last = item;
    this.size++;
    if (item.expiresAt < this.timerDueAt) this.arm(item.expiresAt);
  }

  /** remove takes `item` out (its call ended); it will not expire. Removing an item not in the queue does nothing. */
  remove(item: Expiring, lengthMs: number): void {
    const list = this.byLength.get(lengthMs);
    if (list === undefined || (list.first !== item && item.previousExpiring === undefined)) return;
    this.unlink(list, item);
    if (list.first === undefined) this.byLength.delete(lengthMs);
    // A timer armed for an item gone fires early and re-arms; only an empty
    // queue stops it, so that no timer outlives the calls.
    if (this.size === 0) this.disarm();
  }

  private unlink(list: SameLengthDeadlines, item: Expiring): void {
    if (item.previousExpiring === undefined) list.first = item.nextExpiring;
    else item.previousExpiring.nextExpiring = item.nextExpiring;
    if (item.nextExpiring === undefined) list.last = item.previousExpiring;
    else item.nextExpiring.previousExpiring = item.previousExpiring;
    item.previousExpiring = undefined;
    item.nextExpiring = undefined;
    this.size--;
  }

  private arm(dueAt: number): void {
    clearTimeout(this.timer);
    this.timerDueAt = dueAt;
    this.timer = setTimeout(() => this.expireDue(), Math.max(0, Math.ceil(dueAt - performance.now())));
  }

  private disarm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerDueAt = Infinity;
  }

  /** expireDue expires every item whose deadline has passed, then arms the timer for the next one. */
  private expireDue(): void {
    this.timer = undefined;
    this.timerDueAt = Infinity;
    const now = performance.now();
    const due: Expiring[] = [];
    let next = Infinity;
    for (const [lengthMs, list] of this.byLength) {
      while (list.first !== undefined && list.first.expiresAt <= now) {
        const item = list.first;
        this.unlink(list, item);
        due.push(item);
      }
      if (list.first === undefined) this.byLength.delete(lengthMs);
      else next = Math.min(next, list.first.expiresAt);
    }
    if (next !== Infinity) this.arm(next);
    // Expired after the queue is consistent: an expiry may end other calls.
    for (const item of due) item.expire();
  }
}
