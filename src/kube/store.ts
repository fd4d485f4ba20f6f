import type { KubeObject } from "./objects/object-meta";

/** Callbacks a controller registers on a Store, as client-go's ResourceEventHandler. */
export interface StoreHandlers<T> {
  onAdd?(object: T): void;
  /** For a periodic resync, `oldObject` and `newObject` are the same object. */
  onUpdate?(oldObject: T, newObject: T): void;
  onDelete?(object: T): void;
}

/** A (re)list being installed in a Store (see Store.startReplace). */
export interface StoreReplacement<T extends KubeObject> {
  add(object: T): void;
  /** Removes what the list did not name; returns how many objects it named. */
  finish(): number;
}

/**
 * Store is the attacher's cache of one cluster-scoped kind, keyed by name,
 * filled by a Reflector and read by the controllers. It holds slim objects
 * (see objects/) and tells registered handlers about every change.
 *
 * Objects in the store are shared: callers must never mutate them; clone
 * before building a patch.
 */
export class Store<T extends KubeObject> {
  // Invariant: `items` holds the objects of the latest list plus the watch
  // events applied since, each replaced by the response to our own write when
  // that is newer; a name maps to the newest version we have seen.
  private readonly items = new Map<string, T>();
  // Invariant: for a name whose cached object came from applyOwnWrite and
  // whose watch event has not arrived yet, `seenByHandlers` holds the version
  // the handlers were last told about. The watch event is then delivered as
  // an update from that version, as client-go's informer (whose cache our
  // writes never touch) delivers it. Delivered as an update of the cached
  // own write instead, old and new would share a resourceVersion and look
  // like a periodic resync, which always re-queues: a saved attachError
  // would then retry at once and defeat the back-off.
  private readonly seenByHandlers = new Map<string, T>();
  // Invariant: `unobservedOwnWrites` maps a name the cache holds to the
  // resourceVersion our last write to it was answered with, only while the
  // cached object does not show that write. With integer versions that is
  // never: applyOwnWrite puts the answer into the cache. An opaque version
  // cannot be ordered, so it stays until the watch delivers exactly that
  // version or the object goes; the map holds at most the writes in flight.
  private readonly unobservedOwnWrites = new Map<string, string>();
  private readonly handlers: StoreHandlers<T>[] = [];

  addHandlers(handlers: StoreHandlers<T>): void {
    this.handlers.push(handlers);
  }

  get(name: string): T | undefined {
    return this.items.get(name);
  }

  list(): IterableIterator<T> {
    return this.items.values();
  }

  get size(): number {
    return this.items.size;
  }

  /**
   * upsert applies an ADDED or MODIFIED watch event. An event older than the
   * cached object is dropped: the cache can only be ahead of the watch
   * through applyOwnWrite, and going back to the older state would make a
   * worker redo the write (and the driver call before it) that produced the
   * newer one. The watch delivers that newer version later, and with it the
   * handlers' notification.
   */
  upsert(object: T): void {
    const name = object.metadata.name;
    const cached = this.items.get(name);
    if (cached && isNewerResourceVersion(cached.metadata.resourceVersion, object.metadata.resourceVersion)) return;
    const previous = this.seenByHandlers.get(name) ?? cached;
    this.seenByHandlers.delete(name);
    this.items.set(name, object);
    if (this.unobservedOwnWrites.get(name) === object.metadata.resourceVersion) this.unobservedOwnWrites.delete(name);
    for (const handler of this.handlers) {
      if (previous) handler.onUpdate?.(previous, object);
      else handler.onAdd?.(object);
    }
  }

  /** remove applies a DELETED watch event. */
  remove(object: T): void {
    // The object handed on is the final state the server sent with the deletion.
    this.items.delete(object.metadata.name);
    this.seenByHandlers.delete(object.metadata.name);
    this.unobservedOwnWrites.delete(object.metadata.name);
    for (const handler of this.handlers) handler.onDelete?.(object);
  }

  /**
   * startReplace installs a (re)list as its pages arrive: `add` applies
   * each object at once, as a watch event would, and `finish` removes what
   * the list did not name (deleted while we were not watching). A relist of 100,000 objects then never holds a second
   * copy of them all next to the cache (each older version becomes garbage
   * as its successor arrives), only the set of names seen. A list that
   * fails half-way leaves what it added; the next list's `finish` removes
   * what is gone. `finish` returns how many objects the list named.
   */
  startReplace(): StoreReplacement<T> {
    const seen = new Set<string>();
    return {
      add: (object) => {
        seen.add(object.metadata.name);
        this.upsert(object);
      },
      finish: () => {
        // Collected first: removing while iterating the map would skip entries.
        const gone: T[] = [];
        for (const [name, object] of this.items) if (!seen.has(name)) gone.push(object);
        for (const object of gone) this.remove(object);
        return seen.size;
      },
    };
  }

  /**
   * applyOwnWrite puts the object the server returned for one of our own
   * writes into the cache, if it is newer than what the cache holds, without
   * telling the handlers (the watch event that follows will). Without it, a
   * worker that re-processes a name right after a write would still read the
   * pre-write object and repeat a publish or unpublish the driver has done.
   * client-go's MutationCache exists for the same reason. An answer whose
   * version cannot be ordered against the cache's is remembered instead
   * (unobservedOwnWrite) until the watch delivers it.
   */
  applyOwnWrite(object: T): void {
    const name = object.metadata.name;
    const written = object.metadata.resourceVersion;
    const cached = this.items.get(name);
    // Only an object the cache holds is updated: one it lacks was deleted
    // meanwhile (its DELETED event came before our write's response, as when
    // removing the last finalizer deletes the VA) and must stay gone.
    if (!cached) return;
    if (isNewerResourceVersion(written, cached.metadata.resourceVersion)) {
      // Only the first own write since the handlers' last event: a second one
      // replaces an object the handlers never saw.
      if (!this.seenByHandlers.has(name)) this.seenByHandlers.set(name, cached);
      this.items.set(name, object);
      this.unobservedOwnWrites.delete(name);
    } else if (observes(cached.metadata.resourceVersion, written)) {
      this.unobservedOwnWrites.delete(name);
    } else {
      this.unobservedOwnWrites.set(name, written);
    }
  }

  /**
   * unobservedOwnWrite answers the resourceVersion of our last write to the
   * object named `name` that the cache does not show yet, if any: the
   * reconciler leaves such an object to the worker whose write is in flight.
   */
  unobservedOwnWrite(name: string): string | undefined {
    return this.unobservedOwnWrites.get(name);
  }

  /**
   * parseUnlessCached turns `raw`, an API object as the server sent it, into
   * what the store keeps: the cached object itself when `raw` is the very
   * version the cache holds (same name, same resourceVersion), else
   * `parse(raw)`. A resourceVersion names one state of one object, so such a
   * copy holds nothing the cached one lacks, and each version is validated
   * once, on its way in: our write's answer and then its watch event (or the
   * other way round) are one version, and so is every unchanged object of a
   * relist. Anything else, a malformed object included, goes to `parse`,
   * which names what is wrong with it.
   *
   * One answer breaks the rule that a version names one state: a write
   * that removes the last finalizer of an object being deleted deletes it,
   * and kube-apiserver answers with the object as written (no finalizers)
   * under the resourceVersion it was last stored with, which the cache may
   * hold with the finalizers still on. Such an answer is always parsed, so
   * that its writer sees the object gone (the VA writer then sends no
   * status patch that could only answer NotFound).
   */
  parseUnlessCached(raw: unknown, parse: (raw: unknown) => T): T {
    const { name, resourceVersion, deletedByThisWrite } = identityOf(raw);
    const cached = name === undefined ? undefined : this.items.get(name);
    if (cached && !deletedByThisWrite && resourceVersion !== undefined && cached.metadata.resourceVersion === resourceVersion) return cached;
    return parse(raw);
  }

  /** resync re-delivers every cached object as an update of itself (--resync). */
  resync(): void {
    for (const object of [...this.items.values()]) {
      for (const handler of this.handlers) handler.onUpdate?.(object, object);
    }
  }
}

/**
 * isNewerResourceVersion compares resourceVersions. They are opaque to clients in general,
 * but every API server backed by etcd issues integers that grow with each
 * write; client-go's MutationCache relies on the same. Anything that does not
 * parse counts as not newer, so the watch stays the only source of truth.
 */
export function isNewerResourceVersion(candidate: string, current: string): boolean {
  if (!/^\d+$/.test(candidate) || !/^\d+$/.test(current)) return false;
  return BigInt(candidate) > BigInt(current);
}

/**
 * observes: an object at `cachedVersion` shows a write answered with
 * `writtenVersion`. Equal versions always do; a newer one does only when
 * both are integers (see isNewerResourceVersion), since opaque versions
 * cannot be ordered.
 */
export function observes(cachedVersion: string, writtenVersion: string): boolean {
  return cachedVersion === writtenVersion || isNewerResourceVersion(cachedVersion, writtenVersion);
}

/**
 * identityOf reads, of an object not validated yet, metadata.name and a
 * non-empty metadata.resourceVersion (either undefined where it is missing
 * or not a string), and whether it is being deleted with no finalizer left.
 * kube-apiserver keeps no VA, PV or CSINode in that state (none has a
 * grace period): it is the server's last word on an object it has just
 * deleted, the answer to the write that deleted it or a DELETED event.
 */
function identityOf(raw: unknown): { name?: string; resourceVersion?: string; deletedByThisWrite: boolean } {
  const metadata = typeof raw === "object" && raw !== null ? (raw as { metadata?: unknown }).metadata : undefined;
  if (typeof metadata !== "object" || metadata === null) return { deletedByThisWrite: false };
  const { name, resourceVersion, deletionTimestamp, finalizers } = metadata as { name?: unknown; resourceVersion?: unknown; deletionTimestamp?: unknown; finalizers?: unknown };
  const finalizerLeft = Array.isArray(finalizers) && finalizers.length > 0;
  return {
    ...(typeof name === "string" ? { name } : {}),
    ...(typeof resourceVersion === "string" && resourceVersion !== "" ? { resourceVersion } : {}),
    deletedByThisWrite: typeof deletionTimestamp === "string" && deletionTimestamp !== "" && !finalizerLeft,
  };
}
