import type { KubeClient } from "./http-client";
import { isExpired, isTooManyRequests, KubeApiError } from "./errors";
import type { KubeObject } from "./objects/object-meta";
import { listInPages } from "./paged-list";
import type { Store } from "./store";
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
  object?: { metadata?: { resourceVersion?: string }; code?: number; reason?: string; message?: string };
}

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
 * Reflector keeps a Store in step with the API server for one kind: a paged
 * list, then a watch from the list's resourceVersion with bookmarks, as
 * client-go's reflector does. It replaces informers at a fraction of their
 * memory, because the store keeps slim objects only.
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

  /** run lists and watches until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const { log, kind } = this.options;
    const backoff = new Backoff(this.options.backoff);
    while (!signal.aborted) {
      try {
        if (this.resourceVersion === "") await this.list(signal);
        const started = performance.now();
        const events = await this.watch(signal);
        if (events > 0 || performance.now() - started >= 1000) {
          // A watch that ended normally (server timeout) is simply renewed.
          backoff.reset();
          continue;
        }
        // Closed at once with nothing in it: a proxy or a server shutting
        // down. Renewing it at once would spin; treat it as a failure.
        throw new Error("watch closed immediately without events");
      } catch (e: unknown) {
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

  private async list(signal: AbortSignal): Promise<void> {
    const { client, path, pageSize, store } = this.options;
    const { kind, log } = this.options;
    // Each page goes into the store as it arrives: no list-sized array of
    // parsed objects next to the cache (see Store.startReplace).
    const replacing = store.startReplace();
    let count = 0;
    const resourceVersion = await listInPages(
      client,
      path,
      pageSize,
      (raw) => {
        const object = this.parseOrSkip(raw);
        if (!object) return;
        replacing.add(object);
        count++;
      },
      signal,
    );
    replacing.finish();
    this.resourceVersion = resourceVersion;
    // At 2, as client-go's "Caches populated": a relist after 410 Gone is
    // otherwise invisible in the log until something goes wrong.
    log.v(2).info("Listed", { kind, count, resourceVersion });
    if (!this.syncedOnce) {
      this.syncedOnce = true;
      for (const resolve of this.syncedWaiters.splice(0)) resolve();
    }
  }

  /** watch applies events until the stream ends, and returns how many it applied. */
  private async watch(signal: AbortSignal): Promise<number> {
    const { path, minWatchTimeoutSeconds } = this.options;
    // Randomized so that many watchers do not all reconnect at once.
    const timeoutSeconds = Math.floor(minWatchTimeoutSeconds * (1 + Math.random()));
    const query = new URLSearchParams({
      watch: "true",
      allowWatchBookmarks: "true",
      resourceVersion: this.resourceVersion,
      timeoutSeconds: String(timeoutSeconds),
    });
    // The server ends the watch after timeoutSeconds; our own abort also
    // covers a half-open connection that would otherwise hang forever.
    return withDeadline(signal, (timeoutSeconds + 30) * 1000, (watchSignal) => this.applyEvents(`${path}?${query}`, watchSignal));
  }

  /** applyEvents applies one watch stream's events to the store until it ends, and returns how many it applied. */
  private async applyEvents(watchPath: string, signal: AbortSignal): Promise<number> {
    const { client, store } = this.options;
    let events = 0;
    for await (const raw of client.stream(watchPath, signal)) {
      events++;
      const event = raw as WatchEvent;
      switch (event.type) {
        case "ADDED":
        case "MODIFIED": {
          const object = this.parseOrSkip(event.object);
          if (object) store.upsert(object);
          break;
        }
        case "DELETED": {
          const object = this.parseOrSkip(event.object);
          if (object) store.remove(object);
          break;
        }
        case "BOOKMARK":
          // Bookmarks only move our resourceVersion forward, so that a
          // reconnect after a quiet period does not fall off etcd's window.
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
      if (next) this.resourceVersion = next;
    }
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
