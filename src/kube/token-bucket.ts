import { abortableSleep } from "../util/abortable-sleep";
import { realClock, type Clock } from "../util/clock";

export interface TokenBucketOptions {
  /** Tokens added per second (--kube-api-qps); must be > 0. */
  readonly qps: number;
  /** Bucket size, and the tokens it starts with (--kube-api-burst); must be >= 1. */
  readonly burst: number;
  /** Refills by its monotonic reading, and times the waits for a token. Default: realClock. */
  readonly clock?: Clock;
}

const neverAborted = new AbortController().signal;

/** resolveTokenBucketOptions fills the defaults of every optional field. */
function resolveTokenBucketOptions(options: TokenBucketOptions): Required<TokenBucketOptions> {
  return { qps: options.qps, burst: options.burst, clock: options.clock ?? realClock };
}

/**
 * TokenBucket is the client-side API rate limiter behind --kube-api-qps and
 * --kube-api-burst, with client-go's `flowcontrol.NewTokenBucketRateLimiter`
 * semantics (itself golang.org/x/time/rate): the bucket starts full with
 * `burst` tokens and refills at `qps` tokens a second up to `burst`; `wait`
 * takes one token, and when none is left it reserves the next one by letting
 * the count go negative, so callers are served in the order they asked
 * (first come, first served) and each sleeps exactly until its own token
 * exists. A caller that gives up (its signal aborts) hands its reservation
 * back.
 *
 * Invariant: `tokens` is the count at time `last`; it is never above `burst`
 * and is negative by the number of reservations not yet due.
 */
export class TokenBucket {
  private readonly options: Required<TokenBucketOptions>;
  private tokens: number;
  private last: number;

  constructor(options: TokenBucketOptions) {
    if (!(options.qps > 0) || !Number.isFinite(options.qps)) throw new RangeError(`token bucket qps must be a positive number, got ${options.qps}`);
    if (!Number.isInteger(options.burst) || options.burst < 1) throw new RangeError(`token bucket burst must be an integer >= 1, got ${options.burst}`);
    this.options = resolveTokenBucketOptions(options);
    this.tokens = options.burst;
    this.last = this.options.clock.monotonic();
  }

  /**
   * wait resolves when the caller may send one request. If `signal` aborts
   * first, the token is returned and the promise rejects with the signal's
   * reason.
   */
  async wait(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    this.refill();
    this.tokens -= 1;
    if (this.tokens >= 0) return;
    const delayMs = (-this.tokens / this.options.qps) * 1000;
    await abortableSleep(delayMs, signal ?? neverAborted, this.options.clock);
    if (signal?.aborted) {
      // Give the reservation back so that later callers do not wait for a
      // request that was never sent (x/time/rate's Reservation.Cancel).
      this.refill();
      this.tokens = Math.min(this.options.burst, this.tokens + 1);
      throw signal.reason;
    }
  }

  /**
   * tryTake takes one token if one is there now, never waiting or reserving
   * (client-go's TryAccept): for callers that drop what they cannot send.
   */
  tryTake(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** available is the number of whole tokens a caller could take now without waiting. */
  available(): number {
    this.refill();
    return Math.max(0, Math.floor(this.tokens));
  }

  private refill(): void {
    const now = this.options.clock.monotonic();
    // The monotonic reading: a step of the wall clock must neither refill a
    // whole burst at once (forward) nor hold every request (back).
    const elapsedMs = now - this.last;
    this.last = now;
    if (elapsedMs <= 0) return;
    this.tokens = Math.min(this.options.burst, this.tokens + (elapsedMs * this.options.qps) / 1000);
  }
}

/**
 * createApiThrottle turns --kube-api-qps/--kube-api-burst into the `throttle`
 * hook of KubeClient, resolving them as client-go's rest.RESTClientFor does:
 * qps 0 means the default 5, burst 0 the default 10, and a negative qps
 * means no client-side limit at all (undefined: no throttle).
 */
export function createApiThrottle(qps: number, burst: number, options: Pick<TokenBucketOptions, "clock"> = {}): ((signal?: AbortSignal) => Promise<void>) | undefined {
  const effectiveQps = qps === 0 ? 5 : qps;
  const effectiveBurst = burst === 0 ? 10 : burst;
  if (effectiveQps < 0) return undefined;
  if (!Number.isFinite(effectiveQps)) throw new RangeError(`--kube-api-qps must be a finite number, got ${qps}`);
  if (!Number.isInteger(effectiveBurst) || effectiveBurst < 1) throw new RangeError(`--kube-api-burst must be a whole number >= 0, got ${burst}`);
  const bucket = new TokenBucket({ ...options, qps: effectiveQps, burst: effectiveBurst });
  return (signal) => bucket.wait(signal);
}
