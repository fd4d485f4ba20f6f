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
 * failure. Deleting a pod, the kubelet stops its containers at the same
 * moment, one goroutine each; a driver that exits at once can close its
 * socket before our SIGTERM is handled (3 of 4 pod deletions on a real
 * node), and on a loaded node (load 10 on 2 cores) the SIGTERM
 * came more than a second after the driver was gone. The wait decides only
 * the exit code and the termination message: the work has stopped and the
 * Lease has been given back when the loss was seen (see {@link DriverLoss}),
 * so a real loss costs nothing but this much later a restart.
 */
export const stopSignalSpreadMs = 10_000;

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
 * come, or comes within the signals' spread.
 */
async function meaningOfDriverLoss(options: DriverLossOptions): Promise<DriverLossMeaning> {
  const { stopping } = options;
  if (!stopping.aborted) await abortableSleep(options.signalSpreadMs ?? stopSignalSpreadMs, stopping, options.clock ?? realClock);
  return stopping.aborted ? "shutting-down" : "lost";
}

export interface DriverLossWatchOptions extends DriverLossOptions {
  /** Stops the work (the controller, the elector's term) as a stop signal does. */
  readonly stopWork: () => void;
}

/**
 * DriverLoss is what the attacher does when its driver connection is lost.
 * The work stops at once, whatever the loss turns out to mean: with no
 * driver nothing can be published or unpublished, and the calls in flight
 * on the lost connection have already failed, so a leader's term ends with
 * nothing in flight and its elector gives the Lease back
 * (ReleaseLeaderElectionOnExit) while the loss is still being judged.
 * Judged first and stopped after, a leader whose pod's driver left more
 * than the signals' spread before its SIGTERM exited 1 holding the Lease,
 * and the next replica had to wait for the Lease to expire before it could
 * take over.
 */
export class DriverLoss {
  private meaning: Promise<DriverLossMeaning> | undefined;

  constructor(private readonly options: DriverLossWatchOptions) {}

  /** note takes a loss: the first one stops the work and starts judging it (returned); later ones change nothing (undefined). */
  note(): Promise<DriverLossMeaning> | undefined {
    if (this.meaning !== undefined) return undefined;
    this.options.stopWork();
    this.meaning = meaningOfDriverLoss(this.options);
    return this.meaning;
  }

  /** exitCode is the process's once its work has stopped: 1 when the driver was lost, 0 when it left with the shutdown or never did. */
  async exitCode(): Promise<0 | 1> {
    return (await this.meaning) === "lost" ? 1 : 0;
  }
}
