/**
 * Scenario 8, the container limit: the smallest memory limit under which an
 * attacher still does its work, as a container's `resources.limits.memory`
 * would hold it. Each run execs the attacher in a memory cgroup of its own
 * (test/ground/memory-cgroup.ts) after dropping the page cache, so the pages
 * of its binary are charged to it as in a fresh container; then N VAs are
 * created, attached, deleted and detached.
 *
 * First without a limit: the group's peak usage and the cycle's time (exec to
 * the last VA gone). Then the limit walks down (bench/lib/limit-walk.ts): a
 * limit holds when the whole cycle ends within twice the unconstrained time,
 * no OOM kill was recorded for the group, and the process still runs.
 * Below the smallest limit that holds, the first failure says how an
 * attacher fails: killed, or crawling as the kernel evicts its code pages.
 */
import type { AttacherBinary, RunningAttacher } from "../lib/attacher-under-test";
import { round3, type AttacherLimits, type BenchContext } from "../lib/bench-context";
import { createVas, deleteVas, prepareOwnPvs } from "../lib/bench-ground";
import { classifyFailure, deadlineMs, LimitWalk, type LimitTrial } from "../lib/limit-walk";
import { dropPageCache, MemoryGroup, type ChargeSplit } from "../../test/ground/memory-cgroup";
import type { LimitTrialRecord, MetricSpec, RunResult } from "../lib/results";

const MiB = 1024 * 1024;

/** ContainerLimitParams is one cell: N VAs at the given limits, the walk's step. */
export interface ContainerLimitParams extends AttacherLimits {
  readonly volumes: number;
  /** Granularity of the limits tried, MiB. */
  readonly stepMiB: number;
}

export const containerLimitMetrics: readonly MetricSpec[] = [
  { name: "smallestLimitMiB", unit: "MiB", better: "lower", description: "smallest memory cgroup limit under which all VAs attached and detached within 2x the unconstrained time, with no OOM kill (page cache included, as a container's limit counts it)" },
  { name: "peakMiB", unit: "MiB", better: "lower", description: "the group's peak usage without a limit (v1 memory.max_usage_in_bytes / v2 memory.peak; binary pages included)" },
  { name: "peakFileMiB", unit: "MiB", better: "lower", description: "of the group's charge at its highest sampled moment without a limit (every 100 ms), the file pages: page cache, the binary's pages among them (v1 cache / v2 file)" },
  { name: "peakAnonMiB", unit: "MiB", better: "lower", description: "at the same moment, the anonymous pages (v1 rss / v2 anon)" },
  { name: "firstFailureMiB", unit: "MiB", better: "lower", description: "the largest limit below the smallest holding one that failed (how: in the notes)" },
  { name: "unconstrainedSeconds", unit: "s", better: "lower", description: "exec to the last VA gone without a limit" },
  { name: "failedByOomKill", unit: "0/1", better: "lower", description: "1 when the first failure on the way down was an OOM kill, 0 when the attacher crawled or ended otherwise" },
];

/** CycleAttachers: the attacher a cycle measures, and the one that finishes it if it failed. */
interface CycleAttachers {
  readonly measured: AttacherBinary;
  readonly finisher: AttacherBinary;
}

/** CycleOutcome is how one exec-to-all-gone cycle went (a LimitTrial but for its limit, which the unconstrained cycle lacks), and the group's peak usage, with its split at the highest sampled charge. */
type CycleOutcome = Omit<LimitTrial, "limitBytes"> & { readonly peakBytes: number; readonly peakSplit?: ChargeSplit };

/** How often the group's charge split is read during a cycle. */
const splitEveryMs = 100;

/** PeakSplit samples a group's charge by kind and keeps the reading with the highest total: where the peak lives. */
class PeakSplit {
  #highest: ChargeSplit | undefined;
  readonly #timer: ReturnType<typeof setInterval>;

  constructor(private readonly group: MemoryGroup) {
    this.#timer = setInterval(() => this.sample(), splitEveryMs);
  }

  /** stop takes a last reading and ends the sampling; the split at the highest charge seen. */
  stop(): ChargeSplit | undefined {
    clearInterval(this.#timer);
    this.sample();
    return this.#highest;
  }

  private sample(): void {
    const split = this.group.chargeSplit();
    const total = (s: ChargeSplit) => s.fileBytes + s.anonBytes;
    if (this.#highest === undefined || total(split) > total(this.#highest)) this.#highest = split;
  }
}

/**
 * runContainerLimit measures one attacher: unconstrained, then the walk
 * down. `finisher` is the attacher that finishes a failed cycle (finishCycle).
 */
export async function runContainerLimit(ctx: BenchContext, binary: AttacherBinary, round: number, params: ContainerLimitParams, finisher: AttacherBinary): Promise<RunResult> {
  const label = `cl-n${params.volumes}-r${round}-${binary.kind}`;
  let cycles = 0;
  const cycle = (limitBytes: number | undefined, timeoutMs: number) => runCycle(ctx, { measured: binary, finisher }, `${label}-${cycles++}`, params, limitBytes, timeoutMs);

  const free = await cycle(undefined, 600_000);
  if (!free.holds) throw new Error(`${binary.kind} failed without a memory limit: ${free.failure ?? ""} ${free.detail ?? ""}`);
  const deadline = deadlineMs(free.seconds * 1000);
  const walk = new LimitWalk({ peakBytes: free.peakBytes, stepBytes: params.stepMiB * MiB, minBytes: 16 * MiB });
  for (let limit = walk.next(); limit !== undefined; limit = walk.next()) {
    walk.record({ limitBytes: limit, ...(await cycle(limit, deadline)) });
  }
  const smallest = walk.smallestHolding();
  const first = walk.firstFailure();
  const trials = walk.trials.map((t): LimitTrialRecord => ({
    limitMiB: t.limitBytes / MiB,
    holds: t.holds,
    seconds: round3(t.seconds),
    ...(t.failure === undefined ? {} : { failure: t.failure }),
    ...(t.detail === undefined ? {} : { detail: t.detail }),
  }));
  const walkText = trials.map((t) => `${t.limitMiB}${t.holds ? " holds" : ` ${t.failure ?? "fails"}`}`).join(", ");
  return {
    kind: binary.kind,
    round,
    metrics: {
      smallestLimitMiB: smallest === undefined ? Number.NaN : smallest / MiB,
      peakMiB: round3(free.peakBytes / MiB),
      peakFileMiB: free.peakSplit === undefined ? Number.NaN : round3(free.peakSplit.fileBytes / MiB),
      peakAnonMiB: free.peakSplit === undefined ? Number.NaN : round3(free.peakSplit.anonBytes / MiB),
      firstFailureMiB: first === undefined ? Number.NaN : first.limitBytes / MiB,
      unconstrainedSeconds: round3(free.seconds),
      failedByOomKill: first === undefined ? Number.NaN : first.failure === "oom-kill" ? 1 : 0,
    },
    limitTrials: trials,
    notes: [
      `${binary.kind} r${round}: unconstrained ${round3(free.seconds)} s, peak ${round3(free.peakBytes / MiB)} MiB` +
        (free.peakSplit === undefined ? "" : ` (at the highest sample: file ${round3(free.peakSplit.fileBytes / MiB)}, anonymous ${round3(free.peakSplit.anonBytes / MiB)})`) +
        `; walk (MiB) ${walkText}` +
        (first === undefined ? "" : `; fails first at ${first.limitBytes / MiB} MiB by ${first.failure ?? "?"}${first.detail === undefined ? "" : ` (${first.detail})`}`),
    ],
  };
}

/**
 * runCycle execs the attacher in a fresh group under `limitBytes`, then
 * creates the VAs once it is ready and waits until all are attached and,
 * deleted, gone, within `timeoutMs` of the exec. Whatever happens, the VAs
 * are gone afterwards (finishCycle).
 */
async function runCycle(ctx: BenchContext, attachers: CycleAttachers, label: string, params: ContainerLimitParams, limitBytes: number | undefined, timeoutMs: number): Promise<CycleOutcome> {
  const binary = attachers.measured;
  await prepareOwnPvs(ctx.ground, params.volumes, ctx.ownPvs);
  ctx.watch.forget();
  const group = MemoryGroup.create(`bench-${label}-${process.pid}`);
  group.setLimit(limitBytes);
  dropPageCache();
  let attacher: RunningAttacher | undefined;
  let names: string[] = [];
  const deleted = { started: false };
  // Only the unconstrained cycle's peak is reported.
  const split = limitBytes === undefined ? new PeakSplit(group) : undefined;
  try {
    attacher = ctx.start(binary, label, params, { wrapper: group.wrapper() });
    const until = attacher.execAt + timeoutMs;
    const left = () => Math.max(1, until - performance.now());
    const running = attacher;
    try {
      await running.waitReady(left());
      names = await createVas(ctx.ground.admin, label, params.volumes);
      const attached = () => ctx.watch.countAttached(names);
      await ctx.waitFor(`${label}: all attached`, () => attached() === names.length, () => `${label}: attached ${attached()}/${names.length}`, left(), [running.process]);
      deleted.started = true;
      await deleteVas(ctx.ground.admin, names);
      const gone = () => ctx.watch.countGone(names);
      await ctx.waitFor(`${label}: VAs gone`, () => gone() === names.length, () => `${label}: gone ${gone()}/${names.length}`, left(), [running.process]);
      const seconds = (performance.now() - running.execAt) / 1000;
      const oomKills = group.oomKills();
      const peakSplit = split?.stop();
      if (oomKills > 0) return { holds: false, seconds, peakBytes: group.peakBytes(), failure: "oom-kill", detail: "finished, but the group recorded an OOM kill" };
      return { holds: true, seconds, peakBytes: group.peakBytes(), ...(peakSplit === undefined ? {} : { peakSplit }) };
    } catch (e: unknown) {
      const seconds = (performance.now() - running.execAt) / 1000;
      const failure = classifyFailure(group.oomKills(), running.process.running);
      const progress = names.length === 0 ? "not ready" : `${ctx.watch.countAttached(names)}/${names.length} attached, ${deleted.started ? ctx.watch.countGone(names) : 0}/${names.length} gone`;
      const detail = `${progress} after ${round3(seconds)} s${failure === "exited" ? `; ${e instanceof Error ? e.message.split("\n")[0] : String(e)}` : ""}`;
      return { holds: false, seconds, peakBytes: group.peakBytes(), failure, detail };
    }
  } finally {
    split?.stop();
    await finishCycle(ctx, attachers.finisher, label, params, group, attacher, names);
  }
}

/**
 * finishCycle makes sure every VA of the cycle is gone, then removes the
 * group. A cycle that failed is finished by a fresh `finisher` without a
 * limit, which sees every remaining VA in its first list and retries what
 * fails. It must retry: the attacher that crawled may have dropped work, and
 * the floor client never retries, so a fresh floor client too can leave a
 * deleted VA with its finalizer and wait out the whole timeout (it left two
 * in the full run of 2026-11-23).
 */
async function finishCycle(ctx: BenchContext, finisher: AttacherBinary, label: string, params: ContainerLimitParams, group: MemoryGroup, attacher: RunningAttacher | undefined, names: readonly string[]): Promise<void> {
  try {
    await attacher?.stop();
    if (names.length > 0 && ctx.watch.countGone(names) < names.length) {
      const helper = ctx.start(finisher, `${label}-cleanup`, params);
      try {
        await helper.waitReady(120_000);
        await ctx.cleanUp(names, helper, `${label} cleanup`, 600_000);
      } finally {
        await helper.stop();
      }
    }
  } finally {
    group.remove();
  }
}
