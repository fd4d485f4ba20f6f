/**
 * Scenario 4, memory: RSS when idle on an empty cluster, RSS with foreign
 * PVs (another driver's) present, and the growth per 1,000 own attached VAs.
 */
import type { AttacherBinary } from "../lib/attacher-under-test";
import { rssCurve, round3, settleRss, type AttacherLimits, type BenchContext } from "../lib/bench-context";
import { createVas, prepareOwnPvs } from "../lib/bench-ground";
import type { MetricSpec, RunResult } from "../lib/results";
import { describeRssSplit, executableTotal, readRssSplit } from "../lib/smaps";

/** How long RSS is left to settle (GC, lazy pages) before it is read. */
const settleMs = 3_000;

export const idleMetrics: readonly MetricSpec[] = [
  { name: "idleRssMiB", unit: "MiB", better: "lower", description: "median VmRSS over the last second of 3 s idle after ready, on an empty cluster" },
  { name: "idleAnonMiB", unit: "MiB", better: "lower", description: "RssAnon (private RSS, without the mapped executable) after idling" },
  { name: "hwmMiB", unit: "MiB", better: "lower", description: "VmHWM after idling" },
  { name: "idleExecutableMiB", unit: "MiB", better: "lower", description: "of the idle RSS, the file-backed pages of the executable (smaps; its segments in the notes)" },
  { name: "idleOtherFileMiB", unit: "MiB", better: "lower", description: "of the idle RSS, the file-backed pages of other files (shared libraries)" },
];

export async function runIdle(ctx: BenchContext, binary: AttacherBinary, round: number, limits: AttacherLimits): Promise<RunResult> {
  const attacher = ctx.start(binary, `idle-r${round}`, limits);
  try {
    await attacher.waitReady();
    const idleRssMiB = await settleRss(attacher, settleMs);
    const split = readRssSplit(attacher.pid);
    return {
      kind: binary.kind,
      round,
      metrics: {
        idleRssMiB,
        idleAnonMiB: round3(attacher.anonBytes() / 1048576),
        hwmMiB: round3(attacher.hwmBytes() / 1048576),
        idleExecutableMiB: split === undefined ? Number.NaN : round3(executableTotal(split) / 1048576),
        idleOtherFileMiB: split === undefined ? Number.NaN : round3(split.otherFileBytes / 1048576),
      },
      rssCurve: rssCurve(attacher),
      ...(split === undefined ? {} : { notes: [`${binary.kind} r${round} idle pages (MiB): ${describeRssSplit(split)}`] }),
    };
  } finally {
    await attacher.stop();
  }
}

export interface MemoryParams extends AttacherLimits {
  /** Foreign PVs present (created before the rounds). */
  readonly foreignPvs: number;
  /** Own VAs attached for the slope. */
  readonly ownVas: number;
}

export const memoryMetrics: readonly MetricSpec[] = [
  { name: "rssWithForeignMiB", unit: "MiB", better: "lower", description: "VmRSS after ready + 3 s with the foreign PVs (and the own PVs of earlier scenarios, unattached)" },
  { name: "anonWithForeignMiB", unit: "MiB", better: "lower", description: "RssAnon (private RSS) at the same moment" },
  { name: "rssWithOwnMiB", unit: "MiB", better: "lower", description: "VmRSS 3 s after the own VAs are all attached" },
  { name: "slopeMiBPer1000", unit: "MiB", better: "lower", description: "(rssWithOwn - rssWithForeign) per 1,000 own attached VAs" },
  { name: "hwmMiB", unit: "MiB", better: "lower", description: "VmHWM at the end" },
];

export async function runMemory(ctx: BenchContext, binary: AttacherBinary, round: number, params: MemoryParams): Promise<RunResult> {
  const label = `mem-r${round}`;
  await prepareOwnPvs(ctx.ground, params.ownVas, ctx.ownPvs);
  const attacher = ctx.start(binary, label, params);
  try {
    await attacher.waitReady(300_000);
    const rssWithForeignMiB = await settleRss(attacher, settleMs);
    const anonWithForeignMiB = round3(attacher.anonBytes() / 1048576);
    ctx.watch.forget();
    const names = await createVas(ctx.ground.admin, `${label}-${binary.kind}`, params.ownVas);
    const status = () => `${label} ${binary.kind}: attached ${ctx.watch.countAttached(names)}/${names.length}`;
    await ctx.waitFor(`${label}: all attached`, () => ctx.watch.countAttached(names) === names.length, status, 600_000, [attacher.process]);
    const rssWithOwnMiB = await settleRss(attacher, settleMs);
    const result: RunResult = {
      kind: binary.kind,
      round,
      metrics: {
        rssWithForeignMiB,
        anonWithForeignMiB,
        rssWithOwnMiB,
        slopeMiBPer1000: round3(((rssWithOwnMiB - rssWithForeignMiB) * 1000) / params.ownVas),
        hwmMiB: round3(attacher.hwmBytes() / 1048576),
      },
      rssCurve: rssCurve(attacher),
    };
    await ctx.cleanUp(names, attacher, `${label} ${binary.kind}`, 600_000);
    return result;
  } finally {
    await attacher.stop();
  }
}
