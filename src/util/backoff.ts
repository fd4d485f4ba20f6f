/**
 * Back-off: how long to wait before the next try of something that failed,
 * as client-go's `wait.Backoff` counts it. The policies live beside the
 * loops that use them (the reflector's, the driver start-up's), each with
 * the upstream value it copies; the work queue's per-item history is
 * queue/rate-limiter.ts.
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
