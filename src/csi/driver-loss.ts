import { abortableSleep } from "../util/abortable-sleep";
import { realClock, type Clock } from "../util/clock";

/**
 * What a lost driver connection means: "shutting-down" when the process is
 * being stopped anyway (the driver leaving is part of that), "lost" when the
 * driver died under a running attacher (upstream exits 1 so that Kubernetes
 * restarts the pod).
 */
export type DriverLossMeaning = "shutting-down" | "lost";

/**
 * How long a lost driver waits for the stop signal before it counts as a
 * failure. Deleting a pod, the kubelet signals its containers at the same
 * moment, one goroutine each; a driver that exits at once can close its
 * socket before our SIGTERM is handled (3 of 4 pod deletions on a real
 * node, issue 27). A second is far more than the signals' spread and adds
 * only that to a real loss, after which the pod restarts anyway.
 */
export const stopSignalSpreadMs = 1_000;

export interface DriverLossOptions {
  /** Aborts when the process was told to stop (SIGTERM, SIGINT). */
  readonly stopping: AbortSignal;
  /** How long to wait for that signal after the loss. Default {@link stopSignalSpreadMs}. */
  readonly signalSpreadMs?: number;
  /** Time source. Default the real clock. */
  readonly clock?: Clock;
}

/**
 * meaningOfDriverLoss tells a driver going away as part of the pod's
 * shutdown from a driver dying: it is shutdown when the stop signal has
 * come, or comes within the signals' spread. A terminating attacher then
 * goes on draining: calls in flight on the lost connection fail at once,
 * the workers finish, and the process leaves as any clean stop does
 * (exit 0, Lease released), not through "Lost connection to CSI driver".
 */
export async function meaningOfDriverLoss(options: DriverLossOptions): Promise<DriverLossMeaning> {
  const { stopping } = options;
  if (!stopping.aborted) await abortableSleep(options.signalSpreadMs ?? stopSignalSpreadMs, stopping, options.clock ?? realClock);
  return stopping.aborted ? "shutting-down" : "lost";
}
