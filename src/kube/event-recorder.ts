import type { Logger } from "../log/logger";
import { realClock, type Clock } from "../util/clock";
import { abortableSleep } from "../util/abortable-sleep";
import { EventCorrelator, type CorrelationResult } from "./event-correlator";
import { isAlreadyExists, isNotFound, KubeApiError } from "./errors";
import type { KubeClient } from "./http-client";
import { eventNamer, eventPath, eventsPath, formatKubeTime, type CoreEvent, type EventType, type ObjectReference } from "./objects/event";

export interface EventRecorderOptions {
  /** The work client (events are work traffic, under --kube-api-qps like the rest). */
  readonly client: KubeClient;
  /** Where write failures are reported; events never fail the caller. */
  readonly log: Logger;
  /** source.component and reportingComponent of every event, e.g. "csi-attacher". */
  readonly component: string;
  /** source.host and reportingInstance: this replica (the pod's hostname). */
  readonly host: string;
  /** Default the real clock. */
  readonly clock?: Clock;
  /** Events waiting to be written before new ones are dropped. Default 1000 (client-go's broadcaster queue). */
  readonly maxQueued?: number;
  /** Attempts per event on transport errors. Default 12 (client-go's maxTriesPerEvent). */
  readonly maxTries?: number;
  /** Wait between attempts. Default 10 s (client-go's sleepDuration). */
  readonly retryDelayMs?: number;
  /** Random numbers in [0, 1) for the first retry's spread. Default Math.random. */
  readonly random?: () => number;
  /** Ends the retry waits of pending writes, so shutdown does not wait out a retry delay. Default: never. */
  readonly signal?: AbortSignal;
}

/** resolveEventRecorderOptions fills the defaults of every optional field. */
function resolveEventRecorderOptions(options: EventRecorderOptions): Required<EventRecorderOptions> {
  return {
    ...options,
    clock: options.clock ?? realClock,
    maxQueued: options.maxQueued ?? 1000,
    maxTries: options.maxTries ?? 12,
    retryDelayMs: options.retryDelayMs ?? 10_000,
    random: options.random ?? Math.random,
    signal: options.signal ?? new AbortController().signal,
  };
}

/**
 * EventRecorder writes core/v1 Events the way client-go's recorder and
 * broadcaster do: recording never blocks or fails the caller; events are
 * written one at a time in the background through an {@link EventCorrelator}
 * (aggregation, deduplication into count patches, a per-object rate limit).
 * An event about a cluster-scoped object goes to the "default" namespace,
 * where `kubectl describe` finds it by involvedObject.
 *
 * The message is written as given: callers pass text that is already free
 * of secrets (the same text they store in a status error).
 */
export class EventRecorder {
  private readonly options: Required<EventRecorderOptions>;
  private readonly correlator: EventCorrelator;
  private readonly nameEvent: (objectName: string) => string;
  /** The chain of pending writes; each link writes one event after the previous one settled. */
  private tail: Promise<void> = Promise.resolve();
  private queued = 0;

  constructor(options: EventRecorderOptions) {
    this.options = resolveEventRecorderOptions(options);
    const { clock } = this.options;
    this.nameEvent = eventNamer(() => clock.now());
    this.correlator = new EventCorrelator({ clock, nameEvent: this.nameEvent });
  }

  /** warning records a Warning event about `object`; it returns at once. */
  warning(object: ObjectReference, reason: string, message: string): void {
    this.record("Warning", object, reason, message);
  }

  /** record queues one event for writing; drops it (with a log line) when the queue is full. */
  record(type: EventType, object: ObjectReference, reason: string, message: string): void {
    if (this.queued >= this.options.maxQueued) {
      this.options.log.error("Unable to record event: too many queued events, dropped event", { object: object.name, reason });
      return;
    }
    const event = this.makeEvent(type, object, reason, message);
    this.queued++;
    this.tail = this.tail
      .then(() => this.write(event))
      .catch((e: unknown) => this.options.log.error("Unable to write event", { err: e, object: object.name, reason }))
      .finally(() => {
        this.queued--;
      });
  }

  /** drain resolves once every event recorded so far has been written, skipped or given up on. */
  async drain(): Promise<void> {
    await this.tail;
  }

  private makeEvent(type: EventType, object: ObjectReference, reason: string, message: string): CoreEvent {
    const timestamp = formatKubeTime(this.options.clock.now());
    return {
      metadata: { name: this.nameEvent(object.name), namespace: object.namespace === "" ? "default" : object.namespace },
      involvedObject: object,
      reason,
      message,
      type,
      source: { component: this.options.component, host: this.options.host },
      reportingComponent: this.options.component,
      reportingInstance: this.options.host,
      firstTimestamp: timestamp,
      lastTimestamp: timestamp,
      count: 1,
    };
  }

  private async write(event: CoreEvent): Promise<void> {
    const result = this.correlator.correlate(event);
    if (result.skip) {
      this.options.log.v(4).info("Event dropped by the per-object rate limit", { object: event.involvedObject.name, reason: event.reason });
      return;
    }
    for (let tries = 1; ; tries++) {
      try {
        const written = await this.send(result);
        this.correlator.updateState(result.key, written);
        return;
      } catch (e: unknown) {
        if (e instanceof KubeApiError) {
          // The server answered: retrying the same write cannot change its mind (client-go does not retry either).
          if (isAlreadyExists(e)) this.options.log.v(5).info("Event already exists", { event: result.event.metadata.name });
          else this.options.log.error("Server rejected event (will not retry!)", { err: e.message, object: event.involvedObject.name, reason: event.reason });
          return;
        }
        if (tries >= this.options.maxTries) {
          this.options.log.error("Unable to write event, giving up", { err: e, tries, object: event.involvedObject.name, reason: event.reason });
          return;
        }
        // Spread the first retry so replicas recovering together do not retry in lockstep.
        if (this.options.signal.aborted) return;
        await abortableSleep(tries === 1 ? this.options.random() * this.options.retryDelayMs : this.options.retryDelayMs, this.options.signal, this.options.clock);
      }
    }
  }

  /** send patches the existing event for a repeat (creating it anew if it expired meanwhile) or creates a new one. */
  private async send(result: Extract<CorrelationResult, { skip: false }>): Promise<CoreEvent> {
    const { event, patch } = result;
    if (patch) {
      try {
        return await this.options.client.patch<CoreEvent>(eventPath(event.metadata.namespace, event.metadata.name), "merge", patch);
      } catch (e: unknown) {
        // Events expire (one hour by default): start a new object with the count so far.
        if (!isNotFound(e)) throw e;
      }
    }
    return this.options.client.post<CoreEvent>(eventsPath(event.metadata.namespace), { apiVersion: "v1", kind: "Event", ...withoutResourceVersion(event) });
  }
}

function withoutResourceVersion(event: CoreEvent): CoreEvent {
  return { ...event, metadata: { name: event.metadata.name, namespace: event.metadata.namespace } };
}
