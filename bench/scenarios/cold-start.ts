/**
 * Scenario 3, cold start: with VAs already waiting, exec to ready and exec
 * to the first (and the last) VA attached, and the start-up timeline in
 * between, read from each attacher's log.
 */
import type { AttacherBinary } from "../lib/attacher-under-test";
import { round3, type AttacherLimits, type BenchContext } from "../lib/bench-context";
import { createVas, prepareOwnPvs } from "../lib/bench-ground";
import type { MetricSpec, RunResult } from "../lib/results";
import { startupTimeline } from "../lib/startup-timeline";

export interface ColdStartParams extends AttacherLimits {
  readonly waiting: number;
}

export const coldStartMetrics: readonly MetricSpec[] = [
  { name: "readyMs", unit: "ms", better: "lower", description: "exec to the readiness log line (ours: \"Caches synced\"; Go: client-go's \"Caches populated\" for VAs and PVs)" },
  { name: "firstAttachedMs", unit: "ms", better: "lower", description: "exec to the first waiting VA attached" },
  { name: "allAttachedMs", unit: "ms", better: "lower", description: "exec to every waiting VA attached" },
];

export async function runColdStart(ctx: BenchContext, binary: AttacherBinary, round: number, params: ColdStartParams): Promise<RunResult> {
  const label = `cold-r${round}`;
  await prepareOwnPvs(ctx.ground, params.waiting, ctx.ownPvs);
  const names = await createVas(ctx.ground.admin, `${label}-${binary.kind}`, params.waiting);
  ctx.watch.forget();
  const attacher = ctx.start(binary, label, params);
  try {
    const readyMs = await attacher.waitReady();
    const status = () => `${label} ${binary.kind}: attached ${ctx.watch.countAttached(names)}/${names.length}`;
    await ctx.waitFor(`${label}: all attached`, () => ctx.watch.countAttached(names) === names.length, status, 300_000, [attacher.process]);
    const times = names.map((n) => ctx.watch.attachedAt.get(n) ?? Number.NaN);
    const metrics = {
      readyMs: Math.round(readyMs),
      firstAttachedMs: Math.round(Math.min(...times) - attacher.execAt),
      allAttachedMs: Math.round(Math.max(...times) - attacher.execAt),
    };
    const result: RunResult = {
      kind: binary.kind,
      round,
      metrics,
      ...(binary.kind === "floor" ? {} : { startupTimeline: startupTimeline(binary.kind, attacher.log(), performance.timeOrigin + attacher.execAt, metrics) }),
      attachedCurve: ctx.attachedCurve(names, attacher.execAt).map(([t, n]) => [round3(t), n] as const),
    };
    await ctx.cleanUp(names, attacher, `${label} ${binary.kind}`, 300_000);
    return result;
  } finally {
    await attacher.stop();
  }
}
