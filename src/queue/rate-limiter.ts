/**
 * RateLimiter decides how long an item waits before it is retried
 * (client-go `workqueue.TypedRateLimiter`).
 */
export interface RateLimiter<T> {
  /** Returns how many milliseconds `item` should wait now, and records one more failure. */
  when(item: T): number;
  /** Clears the failure history of `item`, typically after it succeeded. */
  forget(item: T): void;
  /** Returns how many times `item` has been requeued since it was last forgotten. */
  numRequeues(item: T): number;
}

/** Options for {@link ItemExponentialFailureRateLimiter}. */
export interface ItemExponentialFailureRateLimiterOptions {
  /** Delay after the first failure, in milliseconds. Default 1000 (the attacher's `--retry-interval-start`). */
  baseDelayMs?: number;
  /** Upper bound on any delay, in milliseconds. Default 300000 (the attacher's `--retry-interval-max`). */
  maxDelayMs?: number;
}

interface ResolvedOptions {
  baseDelayMs: number;
  maxDelayMs: number;
}

function resolveItemExponentialFailureRateLimiterOptions(
  options: ItemExponentialFailureRateLimiterOptions,
): ResolvedOptions {
  return {
    baseDelayMs: options.baseDelayMs ?? 1000,
    maxDelayMs: options.maxDelayMs ?? 300_000,
  };
}

/**
 * 2 ** 1024 is Infinity, and 0 * Infinity is NaN; capping the exponent keeps
 * every product finite, and anything this large is past any sane maximum.
 */
const MAX_EXPONENT = 1023;

/**
 * ItemExponentialFailureRateLimiter delays each item by `base * 2^failures`,
 * capped at `max`, where `failures` counts this item's calls to `when` since
 * it was last forgotten (client-go `ItemExponentialFailureRateLimiter`).
 * Items are told apart as `Map` keys are (SameValueZero), so use strings.
 */
export class ItemExponentialFailureRateLimiter<T = string> implements RateLimiter<T> {
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  /** Failures per item; an item absent from the map has none. */
  private readonly failures = new Map<T, number>();

  constructor(options: ItemExponentialFailureRateLimiterOptions = {}) {
    const resolved = resolveItemExponentialFailureRateLimiterOptions(options);
    this.baseDelayMs = resolved.baseDelayMs;
    this.maxDelayMs = resolved.maxDelayMs;
  }

  when(item: T): number {
    const failures = this.failures.get(item) ?? 0;
    this.failures.set(item, failures + 1);
    const delay = this.baseDelayMs * 2 ** Math.min(failures, MAX_EXPONENT);
    return Math.min(delay, this.maxDelayMs);
  }

  forget(item: T): void {
    this.failures.delete(item);
  }

  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }
}
