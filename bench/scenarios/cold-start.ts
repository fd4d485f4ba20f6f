/**
 * Scenario 3, cold start: with VAs already waiting, exec to ready and exec
 * to the first (and the last) VA attached, and the start-up timeline in
 * between, read from each attacher's log; and the CPU of it all, start-up
 * included, to all attached and to all detached again: a small cluster's
 * whole life never warms the JIT, so this is the CPU it pays (issue 25).
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
  { name: "attachCpuS", unit: "CPU s", better: "lower", description: "user+sys CPU from exec to every waiting VA attached, start-up included" },
  { name: "cycleCpuS", unit: "CPU s", better: "lower", description: "user+sys CPU from exec to every waiting VA attached, then deleted and gone (finalizer removed), start-up included" },
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
    const attachCpuS = attacher.cpuSeconds();
    const times = names.map((n) => ctx.watch.attachedAt.get(n) ?? Number.NaN);
    const metrics = {
      readyMs: Math.round(readyMs),
      firstAttachedMs: Math.round(Math.min(...times) - attacher.execAt),
      allAttachedMs: Math.round(Math.max(...times) - attacher.execAt),
      attachCpuS: round3(attachCpuS),
    };
    const attachedCurve = ctx.attachedCurve(names, attacher.execAt).map(([t, n]) => [round3(t), n] as const);
    await ctx.cleanUp(names, attacher, `${label} ${binary.kind}`, 300_000);
    return {
      kind: binary.kind,
      round,
      metrics: { ...metrics, cycleCpuS: round3(attacher.cpuSeconds()) },
      ...(binary.kind === "floor" ? {} : { startupTimeline: startupTimeline(binary.kind, attacher.log(), performance.timeOrigin + attacher.execAt, metrics) }),
      attachedCurve,
    };
  } finally {
    await attacher.stop();
  }
}
