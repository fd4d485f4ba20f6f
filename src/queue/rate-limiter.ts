import { backoffDelayMs, type BackoffPolicy } from "../util/backoff";

/**
 * RateLimiter decides how long an item waits before it is retried
 * (client-go `workqueue.TypedRateLimiter`).
 */
export interface RateLimiter<T> {
  /** Returns how many milliseconds `item` should wait now, and records one more failure. */
  when(item: T): number;
  /** Clears the failure history of `item`, typically after it succeeded. */
  forget(item: T): void;
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
 * ItemExponentialFailureRateLimiter delays each item by `base * 2^failures`,
 * capped at `max`, where `failures` counts this item's calls to `when` since
 * it was last forgotten (client-go `ItemExponentialFailureRateLimiter`).
 * Items are told apart as `Map` keys are (SameValueZero), so use strings.
 */
export class ItemExponentialFailureRateLimiter<T = string> implements RateLimiter<T> {
  private readonly policy: BackoffPolicy;
  /** Failures per item; an item absent from the map has none. */
  private readonly failures = new Map<T, number>();

  constructor(options: ItemExponentialFailureRateLimiterOptions = {}) {
    const { baseDelayMs, maxDelayMs } = resolveItemExponentialFailureRateLimiterOptions(options);
    this.policy = { initialMs: baseDelayMs, factor: 2, maxMs: maxDelayMs };
  }

  when(item: T): number {
    const failures = this.failures.get(item) ?? 0;
    this.failures.set(item, failures + 1);
    return backoffDelayMs(this.policy, failures);
  }

  forget(item: T): void {
    this.failures.delete(item);
  }
}
