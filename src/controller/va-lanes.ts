import type { VolumeAttachment } from "../kube/objects/volume-attachment";
import type { Store } from "../kube/store";

/** The lanes of the VA queue: attaches and detaches take worker slots in turn. */
const attachLane = 0;
const detachLane = 1;

/**
 * vaQueueLanes sorts a queued VA name into the attach or the detach lane by
 * the cached VA's deletionTimestamp, so that a backlog of slow detaches
 * (a node drained, a namespace deleted) never holds back a new attach, as it
 * does upstream (kubernetes-csi/external-attacher#761), and a flood of
 * attaches never holds back detaches either. A name the cache no longer has
 * goes in the detach lane: its sync finds it gone, or unpublishes a VA that
 * vanished still carrying our finalizer.
 */
export function vaQueueLanes(vas: Store<VolumeAttachment>): { readonly count: number; readonly of: (name: string) => number } {
  return {
    count: 2,
    of: (name) => {
      const va = vas.get(name);
      return va === undefined || va.metadata.deletionTimestamp ? detachLane : attachLane;
    },
  };
}
