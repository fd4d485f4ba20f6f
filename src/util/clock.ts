/**
 * A handle returned by {@link Clock.setTimeout}. Real timers are Bun `Timer`
 * objects; fake clocks are free to hand out plain numbers.
 */
export type TimerHandle = Timer | number;

/**
 * Clock is the small slice of time the queue needs: reading the time and
 * scheduling one callback. It is injected so tests can step a fake clock
 * instead of sleeping (client-go does the same with `k8s.io/utils/clock`).
 */
export interface Clock {
  /** Milliseconds since the epoch, like `Date.now()`. */
  now(): number;
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

/** realClock is the {@link Clock} backed by `Date.now` and the global timers. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    // NaN or negative delays mean "as soon as possible", like the global.
    const delay = Number.isFinite(ms) && ms > 0 ? Math.min(ms, MAX_TIMER_MS) : 0;
    return setTimeout(fn, delay);
  },
  clearTimeout(handle) {
    clearTimeout(handle);
  },
};
