/**
 * Scenario 2, latency: VAs arrive at a steady rate; for each, the time from
 * its creation (the apiserver's answer) to the watch seeing it attached.
 */
import type { AttacherBinary } from "../lib/attacher-under-test";
import { round3, type AttacherLimits, type BenchContext } from "../lib/bench-context";
import { createVa, prepareOwnPvs, vaName } from "../lib/bench-ground";
import type { MetricSpec, RunResult } from "../lib/results";
import { percentile } from "../lib/stats";
import { progress } from "../lib/progress";

export interface LatencyParams extends AttacherLimits {
  readonly perSecond: number;
  readonly seconds: number;
}

export const latencyMetrics: readonly MetricSpec[] = [
  { name: "p50Ms", unit: "ms", better: "lower", description: "median create-to-attached" },
  { name: "p90Ms", unit: "ms", better: "lower", description: "90th percentile create-to-attached" },
  { name: "p99Ms", unit: "ms", better: "lower", description: "99th percentile create-to-attached" },
];

export async function runLatency(ctx: BenchContext, binary: AttacherBinary, round: number, params: LatencyParams): Promise<RunResult> {
  const label = `lat-r${round}`;
  const count = Math.round(params.perSecond * params.seconds);
  await prepareOwnPvs(ctx.ground, count, ctx.ownPvs);
  const attacher = ctx.start(binary, label, params);
  try {
    await attacher.waitReady();
    ctx.watch.forget();
    const createdAt = new Map<string, number>();
    const names = Array.from({ length: count }, (_, i) => vaName(`${label}-${binary.kind}`, i));
    const t0 = performance.now();
    const creations: Promise<void>[] = [];
    for (const [i, name] of names.entries()) {
      // Arrivals on a fixed schedule, not one after another: a slow create
      // must not delay the next arrival.
      const due = t0 + (i * 1000) / params.perSecond;
      const wait = due - performance.now();
      if (wait > 0) await Bun.sleep(wait);
      creations.push(createVa(ctx.ground.admin, name, i).then(() => void createdAt.set(name, performance.now())));
      progress(`${label} ${binary.kind}: arrived ${i + 1}/${count}, attached ${ctx.watch.countAttached(names)}`);
    }
    await Promise.all(creations);
    const status = () => `${label} ${binary.kind}: attached ${ctx.watch.countAttached(names)}/${names.length}`;
    await ctx.waitFor(`${label}: all attached`, () => ctx.watch.countAttached(names) === names.length, status, 300_000, [attacher.process]);
    // The watch may see the attach before the create's answer arrives; such a VA waited ~0 ms.
    const latencies = names.map((n) => Math.max(0, (ctx.watch.attachedAt.get(n) ?? 0) - (createdAt.get(n) ?? 0))).sort((a, b) => a - b);
    const result: RunResult = {
      kind: binary.kind,
      round,
      metrics: { p50Ms: round3(percentile(latencies, 50)), p90Ms: round3(percentile(latencies, 90)), p99Ms: round3(percentile(latencies, 99)) },
      latenciesMs: latencies.map((x) => Math.round(x * 10) / 10),
    };
    await ctx.cleanUp(names, attacher, `${label} ${binary.kind}`, 300_000);
    return result;
  } finally {
    await attacher.stop();
  }
}
