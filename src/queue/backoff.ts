/**
 * Back-off: how long to wait before the next try of something that failed.
 * Every retry policy of the attacher is here or in rate-limiter.ts (which
 * keeps one such history per queued item), so a newcomer looking for "how
 * often does it retry X" finds it in this folder.
 */

/** BackoffPolicy is client-go's `wait.Backoff` reduced to what we use. */
export interface BackoffPolicy {
  /** The first wait, in milliseconds. */
  readonly initialMs: number;
  /** Each wait is the previous one times this; 1 keeps a fixed interval. */
  readonly factor: number;
  /** No wait is longer than this, in milliseconds. */
  readonly maxMs: number;
}

/**
 * A list or watch of the reflector that failed (connection refused, reset,
 * 429, 5xx): client-go's reflector backs off from 800 ms, doubling, to 30 s.
 */
export const listWatchBackoff: BackoffPolicy = { initialMs: 800, factor: 2, maxMs: 30_000 };

/**
 * Waiting for the CSI driver's socket and for Probe to say ready at start-up:
 * upstream retries every second, for ever.
 */
export const driverStartupRetry: BackoffPolicy = { initialMs: 1_000, factor: 1, maxMs: 1_000 };

/**
 * 2 ** 1024 is Infinity, and 0 * Infinity is NaN; capping the exponent keeps
 * every product finite, and anything this large is past any sane maximum.
 */
const maxExponent = 1023;

/** backoffDelayMs is the wait before try `failures + 1`: `initial * factor^failures`, capped at `max`. */
export function backoffDelayMs(policy: BackoffPolicy, failures: number): number {
  return Math.min(policy.initialMs * policy.factor ** Math.min(failures, maxExponent), policy.maxMs);
}

/**
 * Backoff walks one sequence of tries through a policy: `next` gives the
 * wait before the next try and counts a failure, `reset` starts over after a
 * success.
 */
export class Backoff {
  private failures = 0;

  constructor(private readonly policy: BackoffPolicy) {}

  /** next returns the wait before the next try, in milliseconds, and counts one more failure. */
  next(): number {
    return backoffDelayMs(this.policy, this.failures++);
  }

  /** reset forgets the failures: the next wait is the policy's first again. */
  reset(): void {
    this.failures = 0;
  }
}
