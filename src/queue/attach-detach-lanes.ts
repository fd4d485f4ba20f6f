import type { WorkQueueLanes } from "./work-queue";

/** Which kind of work a queued name stands for; the VA queue's lanes are named after them. */
export type AttachOrDetach = "attach" | "detach";

/** The lanes of the VA queue: attaches and detaches take worker slots in turn. */
const attachLane = 0;
const detachLane = 1;

/**
 * attachDetachLanes is the VA queue's lane policy: each queued name goes
 * into the attach or the detach lane (`kindOf`, the controller's rule), so
 * that a backlog of slow detaches (a node drained, a namespace deleted)
 * never holds back a new attach, as it does upstream
 * (kubernetes-csi/external-attacher#761), and a flood of attaches never
 * holds back detaches either.
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
export function attachDetachLanes(kindOf: (name: string) => AttachOrDetach, workers: number): WorkQueueLanes<string> {
  const maxProcessing: number[] = [];
  maxProcessing[attachLane] = Number.POSITIVE_INFINITY;
  maxProcessing[detachLane] = Math.max(1, workers - 1);
  return {
    count: 2,
    of: (name) => (kindOf(name) === "detach" ? detachLane : attachLane),
    maxProcessing,
  };
}
