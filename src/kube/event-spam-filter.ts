import type { Clock } from "../util/clock";
import { LruCache } from "./lru-cache";
import { TokenBucket } from "./token-bucket";

export interface EventSpamFilterOptions {
  /** Refills the buckets. Required: the recorder's clock. */
  readonly clock: Clock;
  /** Events one source may emit about one object at once. Default 25 (client-go's defaultSpamBurst). */
  readonly burst?: number;
  /** Refill rate in events per second. Default 1/300: one more every five minutes (client-go's defaultSpamQPS). */
  readonly qps?: number;
  /** Objects remembered. Default 4096 (client-go's maxLruCacheEntries). */
  readonly capacity?: number;
}

/** resolveEventSpamFilterOptions fills the defaults of every optional field. */
function resolveEventSpamFilterOptions(options: EventSpamFilterOptions): Required<EventSpamFilterOptions> {
  return { clock: options.clock, burst: options.burst ?? 25, qps: options.qps ?? 1 / 300, capacity: options.capacity ?? 4096 };
}

/**
 * EventSpamFilter is client-go's EventSourceObjectSpamFilter: one token
 * bucket per source and involved object. A VA whose attach fails every
 * retry gets its first 25 events through, then one every five minutes, so a
 * retry storm cannot flood the API server with event writes.
 */
export class EventSpamFilter {
  private readonly options: Required<EventSpamFilterOptions>;
  private readonly buckets: LruCache<string, TokenBucket>;

  constructor(options: EventSpamFilterOptions) {
    this.options = resolveEventSpamFilterOptions(options);
    this.buckets = new LruCache(this.options.capacity);
  }

  /** allow takes a token for `key` (source + object) and tells whether one was there. */
  allow(key: string): boolean {
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      const { qps, burst, clock } = this.options;
      bucket = new TokenBucket({ qps, burst, clock });
      this.buckets.set(key, bucket);
    }
    return bucket.tryTake();
  }
}
