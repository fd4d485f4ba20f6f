/**
 * The walk of the container-limit scenario: which memory limit to try next,
 * given what held so far. It starts at the unconstrained peak rounded up to
 * a step (going up a step at a time while that fails), then bisects between
 * the smallest limit that held and the largest that failed, in whole steps,
 * until they are one step apart. It assumes "holds" is monotonic in the
 * limit; a noisy machine can break that, which the per-step record shows.
 */

/** How a run under a limit failed: killed by the OOM killer, too slow (page-cache thrash), or ended otherwise. */
export type FailureKind = "oom-kill" | "crawl" | "exited";

/** LimitTrial is one run under one limit. */
export interface LimitTrial {
  readonly limitBytes: number;
  readonly holds: boolean;
  readonly failure?: FailureKind;
  /** What a failure got done before it was stopped, e.g. "102/300 attached, 0/300 gone". */
  readonly detail?: string;
  /** Exec to the last VA gone (or to the deadline). */
  readonly seconds: number;
}

/** LimitWalkOptions shape the walk. */
export interface LimitWalkOptions {
  /** The group's peak usage without a limit. */
  readonly peakBytes: number;
  /** Granularity of the limits tried. */
  readonly stepBytes: number;
  /** Nothing below this is tried. */
  readonly minBytes: number;
}

/** How many steps above the rounded-up peak are tried before the walk gives up. */
const maxStepsUp = 3;

/** LimitWalk proposes limits (`next`) and is told how each went (`record`). */
export class LimitWalk {
  readonly trials: LimitTrial[] = [];
  private readonly step: number;
  private readonly min: number;
  private readonly start: number;
  private readonly ceiling: number;

  constructor(options: LimitWalkOptions) {
    this.step = options.stepBytes;
    this.min = Math.ceil(options.minBytes / this.step) * this.step;
    this.start = Math.max(this.min, Math.ceil(options.peakBytes / this.step) * this.step);
    this.ceiling = this.start + maxStepsUp * this.step;
  }

  /** next is the limit to try, or undefined when the walk is over. */
  next(): number | undefined {
    const holding = this.smallestHolding();
    if (holding === undefined) {
      // Nothing held yet: from the rounded-up peak upwards.
      const tried = this.trials.map((t) => t.limitBytes);
      const candidate = tried.length === 0 ? this.start : Math.max(...tried) + this.step;
      return candidate > this.ceiling ? undefined : candidate;
    }
    const failing = this.largestFailingBelow(holding);
    // Below the minimum counts as failing without a run.
    const low = failing?.limitBytes ?? this.min - this.step;
    const steps = Math.floor((holding - low) / this.step);
    if (steps <= 1) return undefined;
    return low + Math.floor(steps / 2) * this.step;
  }

  record(trial: LimitTrial): void {
    this.trials.push(trial);
  }

  /** smallestHolding is the smallest limit that held, if any did. */
  smallestHolding(): number | undefined {
    const held = this.trials.filter((t) => t.holds).map((t) => t.limitBytes);
    return held.length === 0 ? undefined : Math.min(...held);
  }

  /** firstFailure is the largest limit below the smallest holding one that failed: where the attacher fails first on the way down. */
  firstFailure(): LimitTrial | undefined {
    const holding = this.smallestHolding();
    return holding === undefined ? undefined : this.largestFailingBelow(holding);
  }

  private largestFailingBelow(limit: number): LimitTrial | undefined {
    let best: LimitTrial | undefined;
    for (const t of this.trials) if (!t.holds && t.limitBytes < limit && (best === undefined || t.limitBytes > best.limitBytes)) best = t;
    return best;
  }
}

/** classifyFailure names how a run that did not hold failed: an OOM kill recorded for the group wins, then the process having ended. */
export function classifyFailure(oomKills: number, processRunning: boolean): FailureKind {
  if (oomKills > 0) return "oom-kill";
  return processRunning ? "crawl" : "exited";
}

/** deadlineMs is how long a run may take and still hold: twice the unconstrained time, with 2 s of absolute slack for short runs. */
export function deadlineMs(unconstrainedMs: number): number {
  return Math.max(unconstrainedMs * 2, unconstrainedMs + 2_000);
}
