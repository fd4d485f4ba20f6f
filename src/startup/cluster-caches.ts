import { cachedObjectParsers, type CachedObjectParsers } from "../controller/cached-objects";
import type { KubeClient } from "../kube/http-client";
import { csiNodesPath, type CsiNode } from "../kube/objects/csi-node";
import { persistentVolumesPath, type PersistentVolume } from "../kube/objects/persistent-volume";
import { volumeAttachmentsPath, type VolumeAttachment } from "../kube/objects/volume-attachment";
import { Reflector } from "../kube/reflector";
import { Store } from "../kube/store";
import type { Logger } from "../log/logger";
import { IdleCollector } from "../util/idle-collector";

export interface ClusterCachesOptions {
  /** The work path's client, which lists and watches. */
  readonly client: KubeClient;
  /** The process logger: the reflectors log their lists, watches and relists. */
  readonly log: Logger;
  /** Our driver's name: what the caches keep whole, and what only as a stub. */
  readonly driverName: string;
  /** Stops the idle collector; the reflectors stop by the signal their `run` is given. */
  readonly signal: AbortSignal;
}

/** ClusterCaches are the attacher's views of the cluster, and the list/watch loops that fill them. */
export interface ClusterCaches {
  readonly vas: Store<VolumeAttachment>;
  readonly pvs: Store<PersistentVolume>;
  readonly csiNodes: Store<CsiNode>;
  /** What the caches keep of an object, for watched objects and our writes' answers alike. */
  readonly parse: CachedObjectParsers;
  /** One per cache, not yet running. */
  readonly reflectors: readonly [Reflector<VolumeAttachment>, Reflector<PersistentVolume>, Reflector<CsiNode>];
}

/**
 * createClusterCaches builds the caches of VolumeAttachments,
 * PersistentVolumes and CSINodes with their reflectors, which the caller
 * runs once everything that handles their events is in place.
 */
export function createClusterCaches(options: ClusterCachesOptions): ClusterCaches {
  const { client, log } = options;
  const vas = new Store<VolumeAttachment>();
  const pvs = new Store<PersistentVolume>();
  const csiNodes = new Store<CsiNode>();
  // What the caches keep (other drivers' objects as stubs, so memory grows
  // with our volumes only), for watched objects and our writes' answers alike.
  const parse = cachedObjectParsers(options.driverName);
  // A burst of cache changes (the first list, a relist, hundreds of attaches)
  // leaves garbage JSC would keep resident for minutes: collect it once the burst is over.
  const idleCollector = new IdleCollector();
  const noteChange = { onAdd: () => idleCollector.note(), onUpdate: () => idleCollector.note(), onDelete: () => idleCollector.note() };
  vas.addHandlers(noteChange);
  pvs.addHandlers(noteChange);
  idleCollector.run(options.signal);
  const reflectors: ClusterCaches["reflectors"] = [
    new Reflector({ client, log, kind: "VolumeAttachment", path: volumeAttachmentsPath, parse: parse.volumeAttachment, store: vas }),
    new Reflector({ client, log, kind: "PersistentVolume", path: persistentVolumesPath, parse: parse.persistentVolume, store: pvs }),
    new Reflector({ client, log, kind: "CSINode", path: csiNodesPath, parse: parse.csiNode, store: csiNodes }),
  ];
  return { vas, pvs, csiNodes, parse, reflectors };
}
