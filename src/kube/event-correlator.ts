import type { Clock } from "../util/clock";
import { EventSpamFilter } from "./event-spam-filter";
import { LruCache } from "./lru-cache";
import { formatKubeTime, type CoreEvent } from "./objects/event";

export interface EventCorrelatorOptions {
  readonly clock: Clock;
  /** Names a new event about an object (see eventNamer). */
  readonly nameEvent: (objectName: string) => string;
}

// client-go's defaults, which nobody tunes: distinct messages with one reason
// about one object before they are combined, the window they are counted in,
// and the entries of each cache.
const maxSimilarEvents = 10;
const aggregateIntervalMs = 600_000;
const cacheSize = 4096;

/** The patch that bumps an existing event: what client-go's two-way merge patch ends up holding. */
export interface EventPatch {
  readonly count: number;
  readonly lastTimestamp: string;
  readonly message: string;
}

/**
 * What to do with an event: skip it (spam), create it, or patch an
 * existing one (`patch` set, `event.metadata.name` the existing event).
 * `key` is where the written result must be recorded with updateState.
 */
export type CorrelationResult = { readonly skip: true } | { readonly skip: false; readonly event: CoreEvent; readonly patch?: EventPatch; readonly key: string };

interface AggregateRecord {
  messages: Set<string>;
  lastSeen: number;
}

interface EventLog {
  readonly count: number;
  readonly firstTimestamp: string;
  readonly name: string;
  readonly resourceVersion: string | undefined;
}

/**
 * EventCorrelator is client-go's EventCorrelator, in its order:
 * 1. aggregate: once one object has had 10 events of one reason with
 *    different messages within 10 minutes, further ones become a single
 *    "(combined from similar events): <message>" event;
 * 2. deduplicate: an event identical to one already written (same source,
 *    object, type, reason, message) becomes a patch of that event's count
 *    and lastTimestamp instead of a new object;
 * 3. spam-filter: every write about an object, new or patch, takes a token
 *    from that object's bucket.
 */
export class EventCorrelator {
  private readonly clock: Clock;
  private readonly nameEvent: (objectName: string) => string;
  private readonly spamFilter: EventSpamFilter;
  private readonly aggregates: LruCache<string, AggregateRecord>;
  private readonly logs: LruCache<string, EventLog>;

  constructor(options: EventCorrelatorOptions) {
    this.clock = options.clock;
    this.nameEvent = options.nameEvent;
    this.spamFilter = new EventSpamFilter({ clock: options.clock, capacity: cacheSize });
    this.aggregates = new LruCache(cacheSize);
    this.logs = new LruCache(cacheSize);
  }

  /** correlate decides what to write for a newly recorded event. */
  correlate(event: CoreEvent): CorrelationResult {
    const { event: aggregated, key } = this.aggregate(event);
    const observed = this.observe(aggregated, key);
    if (!this.spamFilter.allow(spamKey(observed.event))) return { skip: true };
    return observed.patch ? { skip: false, event: observed.event, patch: observed.patch, key } : { skip: false, event: observed.event, key };
  }

  /** updateState records the event as the server stored it, so the next duplicate patches it (by name, at its resourceVersion). */
  updateState(key: string, written: CoreEvent): void {
    this.logs.set(key, {
      count: written.count,
      firstTimestamp: written.firstTimestamp,
      name: written.metadata.name,
      resourceVersion: written.metadata.resourceVersion,
    });
  }

  private aggregate(event: CoreEvent): { event: CoreEvent; key: string } {
    const now = this.clock.now();
    const aggregateKey = similarEventKey(event);
    let record = this.aggregates.get(aggregateKey);
    if (record === undefined || now - record.lastSeen > aggregateIntervalMs) {
      record = { messages: new Set(), lastSeen: now };
    }
    record.messages.add(event.message);
    record.lastSeen = now;
    this.aggregates.set(aggregateKey, record);
    if (record.messages.size < maxSimilarEvents) return { event, key: identicalEventKey(event) };

    // Forget one message so the set stays bounded, as client-go does.
    const first = record.messages.values().next();
    if (!first.done) record.messages.delete(first.value);
    const timestamp = formatKubeTime(now);
    const combined: CoreEvent = {
      ...event,
      metadata: { name: this.nameEvent(event.involvedObject.name), namespace: event.metadata.namespace },
      message: `(combined from similar events): ${event.message}`,
      firstTimestamp: timestamp,
      lastTimestamp: timestamp,
      count: 1,
    };
    return { event: combined, key: aggregateKey };
  }

  private observe(event: CoreEvent, key: string): { event: CoreEvent; patch?: EventPatch } {
    const last = this.logs.get(key);
    if (last === undefined || last.count <= 0) {
      this.logs.set(key, { count: event.count, firstTimestamp: event.firstTimestamp, name: event.metadata.name, resourceVersion: event.metadata.resourceVersion });
      return { event };
    }
    const metadata = last.resourceVersion === undefined ? { name: last.name, namespace: event.metadata.namespace } : { name: last.name, namespace: event.metadata.namespace, resourceVersion: last.resourceVersion };
    const repeated: CoreEvent = { ...event, metadata, firstTimestamp: last.firstTimestamp, count: last.count + 1 };
    this.logs.set(key, { ...last, count: repeated.count });
    return { event: repeated, patch: { count: repeated.count, lastTimestamp: repeated.lastTimestamp, message: repeated.message } };
  }
}

function objectKey(event: CoreEvent): string[] {
  const o = event.involvedObject;
  return [event.source.component, event.source.host, o.kind, o.namespace, o.name, o.uid, o.apiVersion];
}

/** client-go's getSpamKey: source and object. */
function spamKey(event: CoreEvent): string {
  return objectKey(event).join("\u0000");
}

/** client-go's EventAggregatorByReasonFunc key: source, object, type, reason, reporter. */
function similarEventKey(event: CoreEvent): string {
  return [...objectKey(event), event.type, event.reason, event.reportingComponent, event.reportingInstance].join("\u0000");
}

/** client-go's getEventKey: source, object, type, reason and message. */
function identicalEventKey(event: CoreEvent): string {
  return [...objectKey(event), event.type, event.reason, event.message].join("\u0000");
}
