/**
 * FloorCaches: what the floor client gains with FLOOR_CACHES=1, the least
 * an attacher that caches, as upstream's informers and ours do, costs in
 * Bun. PersistentVolumes and CSINodes are listed once and then watched from
 * the list's resourceVersion into two Maps of the objects JSON.parse made:
 * no validation, no slimming, no interning, no handlers, no queue. The
 * floor then reads them instead of a GET each, and (as upstream and ours)
 * sends no PV finalizer patch for a PV whose cached copy carries it. So it
 * pays, as ours does, for the cached objects' memory and for one watch
 * event per PV write; what ours costs above this floor is our code's, not
 * caching's.
 */
import { apiFetch, type ApiTarget } from "./floor-connections";
import { watchEvents } from "./floor-watch";

interface Named {
  metadata: { name: string; resourceVersion?: string };
}

/** One kind's cache: a Map by name, listed then watched. */
class ListWatchedMap<T extends Named> {
  readonly items = new Map<string, T>();

  constructor(
    private readonly target: ApiTarget,
    private readonly path: string,
  ) {}

  /**
   * sync lists the kind and starts the watch from the list's version; it
   * resolves once listed. A watch the server ends is started again from the
   * last version seen (bookmarks keep it fresh while nothing changes); one
   * that fails, or ends with an ERROR event (410 Expired once etcd has
   * compacted that version), lists again first, as any reflector does.
   */
  async sync(): Promise<void> {
    let from = await this.list();
    const onEvent = (type: string, object: T) => {
      if (type === "ERROR") throw new Error(`watch of ${this.path}: ${JSON.stringify(object)}`);
      from = object.metadata.resourceVersion ?? from;
      if (type === "DELETED") this.items.delete(object.metadata.name);
      else if (type !== "BOOKMARK") this.items.set(object.metadata.name, object);
    };
    void (async () => {
      for (;;) {
        try {
          await watchEvents(this.target, `${this.path}?watch=1&allowWatchBookmarks=true&resourceVersion=${from}`, onEvent);
        } catch (e: unknown) {
          process.stderr.write(`floor: watch of ${this.path}: ${e instanceof Error ? e.message : String(e)}; listing again\n`);
          await Bun.sleep(1000);
          from = await this.list().catch(() => from);
        }
      }
    })();
  }

  /** list replaces the Map's contents with a list of the kind, and returns the list's resourceVersion. */
  private async list(): Promise<string> {
    const list = (await (await apiFetch(this.target, this.path)).json()) as { metadata: { resourceVersion: string }; items: T[] };
    this.items.clear();
    for (const item of list.items) this.items.set(item.metadata.name, item);
    return list.metadata.resourceVersion;
  }
}

export interface CachedPv extends Named {
  metadata: { name: string; resourceVersion?: string; finalizers?: string[] };
  spec: { accessModes?: string[]; csi?: { volumeHandle: string; fsType?: string } };
}
export interface CachedCsiNode extends Named {
  spec: { drivers?: { name: string; nodeID: string }[] };
}

export class FloorCaches {
  readonly pvs: ListWatchedMap<CachedPv>;
  readonly csiNodes: ListWatchedMap<CachedCsiNode>;

  constructor(target: ApiTarget) {
    this.pvs = new ListWatchedMap(target, "/api/v1/persistentvolumes");
    this.csiNodes = new ListWatchedMap(target, "/apis/storage.k8s.io/v1/csinodes");
  }

  /** sync lists both kinds at once, as informers do, and keeps watching them. */
  async sync(): Promise<void> {
    await Promise.all([this.pvs.sync(), this.csiNodes.sync()]);
  }
}

/** floorCachesWanted: FLOOR_CACHES=1 in the environment (bench/ab.ts sets it through a wrapper script). */
export function floorCachesWanted(): boolean {
  return process.env["FLOOR_CACHES"] === "1";
}
