/**
 * A handle returned by {@link Clock.setTimeout}. Real timers are Bun `Timer`
 * objects; fake clocks are free to hand out plain numbers.
 */
export type TimerHandle = Timer | number;

/**
 * Clock is the program's clock: reading the time and scheduling one
 * callback. Whatever reads the time or waits for it (the queues, leader
 * election, the API throttle, the token file, events, the VA writer's
 * error timestamps) takes a Clock, so tests step a fake clock instead of
 * sleeping, one way everywhere (client-go does the same with
 * `k8s.io/utils/clock`). Only code that times a real call and that no test
 * drives (a gRPC deadline, the time a watch ran) reads `performance.now`.
 *
 * Two readings, as Go's `time.Time` carries two: `now()` is the wall clock,
 * for times that leave the process (Lease records, Events, error
 * timestamps) and for checks where running early is harmless; `monotonic()`
 * never steps, for every interval whose error would matter. A forward step
 * of the wall clock (NTP, an operator) must not refill the API throttle's
 * whole burst, make a standby think the leader's Lease ran out while it is
 * still renewed (two leaders), end our own leadership at a renew deadline
 * that has not passed, or fire the queues' retries early. Code still on the
 * wall clock never waits for the old time to come round again after a step
 * back: a negative interval makes its check due (token file, kubeconfig,
 * driver start-up report).
 */
export interface Clock {
  /** Milliseconds since the epoch, like `Date.now()`. */
  now(): number;
  /** Milliseconds from an arbitrary origin that never steps, like `performance.now()`: for intervals and deadlines. */
  monotonic(): number;
  /** Calls `fn` once, no earlier than `ms` milliseconds from now. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  /** Cancels a callback scheduled with {@link Clock.setTimeout}; a no-op if it already ran. */
  clearTimeout(handle: TimerHandle): void;
}

/**
 * The longest delay a JavaScript timer accepts; longer ones overflow a signed
 * 32-bit integer and fire at once. Callers that re-check their deadline when
 * woken (the delaying queue does) simply get woken early and re-arm.
 */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** realClock is the {@link Clock} backed by `Date.now`, `performance.now` and the global timers. */
export const realClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout(fn, ms) {
    // NaN or negative delays mean "as soon as possible", like the global.
    const delay = Number.isFinite(ms) && ms > 0 ? Math.min(ms, MAX_TIMER_MS) : 0;
    return setTimeout(fn, delay);
  },
  clearTimeout(handle) {
    clearTimeout(handle);
  },
};
