import type { VolumeAttachment } from "../kube/objects/volume-attachment";
import type { Store } from "../kube/store";
import type { WorkQueueLanes } from "../queue/work-queue";

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
 *
 * Taking turns is not enough when every worker is inside a slow
 * ControllerUnpublish: the new attach would still wait for one of them to
 * return. So detaches may hold at most `workers - 1` workers, and one is
 * always free for an attach, which then waits for nothing but its own
 * publish. The price: a pure detach storm runs one call narrower
 * (1% of the throughput at 100 workers, half at 2). With
 * `--worker-threads=1` detaches keep the one worker (a cap of 0 would never
 * detach): a single worker means one CSI call at a time, which is what
 * users who set it ask for, and an attach then waits for at most the one
 * detach in flight. Attaches have no cap: behind a flood of attaches a
 * detach waits for the first attach call to return, and the lanes' turns
 * then give it that worker.
 */
export function vaQueueLanes(vas: Store<VolumeAttachment>, workers: number): WorkQueueLanes<string> {
  const maxProcessing: number[] = [];
  maxProcessing[attachLane] = Number.POSITIVE_INFINITY;
  maxProcessing[detachLane] = Math.max(1, workers - 1);
  return {
    count: 2,
    of: (name) => {
      const va = vas.get(name);
      return va === undefined || va.metadata.deletionTimestamp ? detachLane : attachLane;
    },
    maxProcessing,
  };
}
