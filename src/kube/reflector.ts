import type { KubeClient } from "./http-client";
import { isExpired, isTooManyRequests, KubeApiError } from "./errors";
import type { KubeObject } from "./objects/object-meta";
import { listInPages } from "./paged-list";
import type { Store, StoreReplacement } from "./store";
import type { Logger } from "../log/logger";
import { abortableSleep } from "../util/abortable-sleep";
import { Backoff, type BackoffPolicy } from "../util/backoff";
import { withDeadline } from "../util/with-deadline";

/**
 * A list or watch of the reflector that failed (connection refused, reset,
 * 429, 5xx): client-go's reflector backs off from 800 ms, doubling, to 30 s.
 */
export const listWatchBackoff: BackoffPolicy = { initialMs: 800, factor: 2, maxMs: 30_000 };

export interface ReflectorOptions<T extends KubeObject> {
  readonly client: KubeClient;
  /** Collection path, e.g. /apis/storage.k8s.io/v1/volumeattachments. */
  readonly path: string;
  /** Kind name for logs and errors. */
  readonly kind: string;
  /** Validates one raw object into its slim form; throws ObjectSchemaError on a malformed one. Not called for a version the store already holds (Store.parseUnlessCached). */
  readonly parse: (raw: unknown) => T;
  readonly store: Store<T>;
  readonly log: Logger;
  /** Objects per list page. Default 500, as client-go's pager. */
  readonly pageSize?: number;
  /** Waits after failed lists and watches. Default listWatchBackoff (client-go's: 800 ms doubling to 30 s). */
  readonly backoff?: BackoffPolicy;
  /** Shortest server-side watch timeout; each watch picks between this and twice it. Default 300 s. */
  readonly minWatchTimeoutSeconds?: number;
}

interface WatchEvent {
  type?: string;
  object?: { metadata?: { resourceVersion?: string; annotations?: Record<string, string> }; code?: number; reason?: string; message?: string };
}

/** The annotation of the bookmark that ends a watch-list's initial events: the store is then complete at its resourceVersion. */
export const initialEventsEndAnnotation = "k8s.io/initial-events-end";

type ResolvedReflectorOptions<T extends KubeObject> = Required<ReflectorOptions<T>>;

/** resolveReflectorOptions fills the defaults of every optional field. */
function resolveReflectorOptions<T extends KubeObject>(options: ReflectorOptions<T>): ResolvedReflectorOptions<T> {
  return {
    ...options,
    pageSize: options.pageSize ?? 500,
    backoff: options.backoff ?? listWatchBackoff,
    minWatchTimeoutSeconds: options.minWatchTimeoutSeconds ?? 300,
  };
}

/**
 * Reflector keeps a Store in step with the API server for one kind, as
 * client-go's reflector does with its WatchListClient feature on (the
 * default of client-go v0.37, which upstream's v4.13.0 is built with): one
 * watch that first streams every object (sendInitialEvents) and marks the
 * end with a bookmark, then carries on as an ordinary watch. A watch-list is
 * one request, however many objects, so --kube-api-qps does not ration a
 * sync page by page, and the server streams it from its watch cache instead
 * of serving pages. A server that refuses or breaks it gets a paged list and
 * a watch from the list's resourceVersion instead, as client-go falls back.
 * It replaces informers at a fraction of their memory, because the store
 * keeps slim objects only.
 */
export class Reflector<T extends KubeObject> {
  private readonly options: ResolvedReflectorOptions<T>;
  private resourceVersion = "";
  private syncedOnce = false;
  private readonly syncedWaiters: (() => void)[] = [];

  constructor(options: ReflectorOptions<T>) {
    this.options = resolveReflectorOptions(options);
  }

  /** waitForSync resolves once the first complete list is in the store. */
  waitForSync(): Promise<void> {
    if (this.syncedOnce) return Promise.resolve();
    return new Promise((resolve) => this.syncedWaiters.push(resolve));
  }

  /** run syncs and watches until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const backoff = new Backoff(this.options.backoff);
    while (!signal.aborted) {
      try {
        const started = performance.now();
        const events = this.resourceVersion === "" ? await this.syncAndWatch(signal) : await this.watch(signal);
        if (events > 0 || performance.now() - started >= 1000) {
          // A watch that ended normally (server timeout) is simply renewed.
          backoff.reset();
          continue;
        }
        // Closed at once with nothing in it: a proxy or a server shutting
        // down. Renewing it at once would spin; treat it as a failure.
        throw new Error("watch closed immediately without events");
      } catch (e: unknown) {
        const { log, kind } = this.options;
        if (signal.aborted) return;
        if (isExpired(e)) {
          // Our resourceVersion was compacted away: only a fresh list can
          // tell what changed meanwhile. No back-off: this is routine.
          log.v(2).info("Watch expired, relisting", { kind });
          this.resourceVersion = "";
          continue;
        }
        // Connection refused, reset, 429, 5xx: the server is unhappy or
        // restarting; retrying at once would only add load.
        const backoffMs = backoff.next();
        log.warn("List/watch failed, backing off", { kind, err: e, backoffMs, throttled: isTooManyRequests(e) });
        await abortableSleep(backoffMs, signal);
      }
    }
  }

  /**
   * syncAndWatch fills the store from nothing (start, or after 410 Gone)
   * and watches on: through a watch-list, or, when the server refuses or
   * breaks it before its initial events end, a paged list and then a watch.
   * Returns how many watch events it applied.
   */
  private async syncAndWatch(signal: AbortSignal): Promise<number> {
    try {
      return await this.watch(signal, "with initial events");
    } catch (e: unknown) {
      // Once the initial events ended this was an ordinary watch, and fails as one.
      if (signal.aborted || this.resourceVersion !== "") throw e;
      const { log, kind } = this.options;
      log.warn("The watch-list request failed, falling back to a paged list", { kind, err: e });
      await this.list(signal);
      return this.watch(signal);
    }
  }

  private async list(signal: AbortSignal): Promise<void> {
    const { client, path, pageSize, store } = this.options;
    // Each page goes into the store as it arrives: no list-sized array of
    // parsed objects next to the cache (see Store.startReplace).
    const replacing = store.startReplace();
    const resourceVersion = await listInPages(
      client,
      path,
      pageSize,
      (raw) => {
        const object = this.parseOrSkip(raw);
        if (object) replacing.add(object);
      },
      signal,
    );
    this.synced(resourceVersion, replacing.finish());
  }

  /** synced records that the store holds every object as of `resourceVersion`, and wakes whoever waits for the first sync. */
  private synced(resourceVersion: string, count: number): void {
    const { kind, log } = this.options;
    this.resourceVersion = resourceVersion;
    // At 2, as client-go's "Caches populated": a relist after 410 Gone is
    // otherwise invisible in the log until something goes wrong.
    log.v(2).info("Listed", { kind, count, resourceVersion });
    if (!this.syncedOnce) {
      this.syncedOnce = true;
      for (const resolve of this.syncedWaiters.splice(0)) resolve();
    }
  }

  /**
   * watch applies events until the stream ends, and returns how many it
   * applied. Without a resourceVersion to start from, it asks for the
   * initial events first (a watch-list) and throws if the stream ends
   * before their end.
   */
  private async watch(signal: AbortSignal, initial?: "with initial events"): Promise<number> {
    const { path, minWatchTimeoutSeconds } = this.options;
    // Randomized so that many watchers do not all reconnect at once.
    const timeoutSeconds = Math.floor(minWatchTimeoutSeconds * (1 + Math.random()));
    const query = new URLSearchParams({ watch: "true", allowWatchBookmarks: "true", timeoutSeconds: String(timeoutSeconds) });
    // A watch-list's initial events are as fresh as a consistent list: no resourceVersion, NotOlderThan it.
    if (initial) {
      query.set("sendInitialEvents", "true");
      query.set("resourceVersionMatch", "NotOlderThan");
    } else {
      query.set("resourceVersion", this.resourceVersion);
    }
    // The server ends the watch after timeoutSeconds; our own abort also
    // covers a half-open connection that would otherwise hang forever.
    return withDeadline(signal, (timeoutSeconds + 30) * 1000, (watchSignal) => this.applyEvents(`${path}?${query}`, watchSignal, initial !== undefined));
  }

  /**
   * applyEvents applies one watch stream's events to the store until it
   * ends, and returns how many it applied. With `initialEvents`, objects go
   * into a replacement of the store until the bookmark that ends them, and
   * only that bookmark sets the resourceVersion (each initial object carries
   * its own, in no order). The replacement is dropped then, not kept for
   * the watch's minutes: it holds the name of every object listed.
   */
  private async applyEvents(watchPath: string, signal: AbortSignal, initialEvents: boolean): Promise<number> {
    const { client, store } = this.options;
    let events = 0;
    let pending: StoreReplacement<T> | undefined = initialEvents ? store.startReplace() : undefined;
    for await (const raw of client.stream(watchPath, signal)) {
      events++;
      const event = raw as WatchEvent;
      switch (event.type) {
        case "ADDED":
        case "MODIFIED": {
          const object = this.parseOrSkip(event.object);
          if (object && pending) pending.add(object);
          else if (object) store.upsert(object);
          break;
        }
        case "DELETED": {
          const object = this.parseOrSkip(event.object);
          if (object) store.remove(object);
          break;
        }
        case "BOOKMARK":
          // Bookmarks only move our resourceVersion forward, so that a
          // reconnect after a quiet period does not fall off etcd's window;
          // the one that ends a watch-list's initial events completes the sync.
          if (pending && event.object?.metadata?.annotations?.[initialEventsEndAnnotation] === "true") {
            this.synced(event.object.metadata.resourceVersion ?? "", pending.finish());
            pending = undefined;
          }
          break;
        case "ERROR":
          // The server's Status for a compacted resourceVersion: the error a
          // 410 answer to a request is, so isExpired takes both alike.
          if (event.object?.code === 410) throw new KubeApiError(410, event.object.reason ?? "Expired", event.object.message ?? "expired");
          throw new Error(`watch error: ${event.object?.message ?? JSON.stringify(event.object)}`);
        default:
          throw new Error(`unexpected watch event type ${JSON.stringify(event.type)}`);
      }
      const next = event.object?.metadata?.resourceVersion;
      if (next && !pending) this.resourceVersion = next;
    }
    if (pending) throw new Error("the watch-list ended before the server marked the end of its initial events");
    return events;
  }

  private parseOrSkip(raw: unknown): T | undefined {
    try {
      return this.options.store.parseUnlessCached(raw, this.options.parse);
    } catch (e: unknown) {
      // One malformed object must not stop the attacher for every other.
      this.options.log.error("Skipping malformed object", { kind: this.options.kind, err: e });
      return undefined;
    }
  }
}
