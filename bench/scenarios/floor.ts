/**
 * Scenario 9, Bun's floor: the same figures for ours, Go and the bare floor
 * client (bench/floor/bare-attacher.ts: the same API writes and CSI calls
 * per VA, no cache, no queue), so that a gap to Go splits into what the
 * runtime costs (floor vs Go) and what our code costs (ours vs floor). Idle
 * memory is read on an empty cluster (each run first removes the own PVs
 * that the cycle before it left), then one throughput cycle of N VAs gives
 * CPU and peak RSS. The floor's run also idles the load-only program
 * (bench/floor/load-only.ts: one request over TLS, one HTTP/2 connection,
 * nothing else), the least a Bun attacher can weigh.
 */
import type { AttacherBinary } from "../lib/attacher-under-test";
import type { BenchContext } from "../lib/bench-context";
import { removeOwnPvs } from "../lib/bench-ground";
import type { MetricSpec, RunResult } from "../lib/results";
import { idleMetrics, runIdle } from "./memory";
import { runThroughput, throughputMetrics, type ThroughputParams } from "./throughput";

export const floorMetrics: readonly MetricSpec[] = [
  ...idleMetrics.filter((m) => m.name !== "hwmMiB"),
  ...throughputMetrics.filter((m) => ["cpuSecondsPer1000", "peakRssMiB", "attachSeconds", "detachSeconds"].includes(m.name)),
  { name: "loadOnlyIdleRssMiB", unit: "MiB", better: "lower", description: "floor (a): VmRSS of a compiled program that only made one request to kube-apiserver over TLS and opened one HTTP/2 connection to the driver, idle (floor row only)" },
  { name: "loadOnlyIdleAnonMiB", unit: "MiB", better: "lower", description: "floor (a): its RssAnon (floor row only)" },
];

/** runFloorScenario idles, then cycles N VAs, with `binary`; for the floor, idles the load-only program first. */
export async function runFloorScenario(ctx: BenchContext, binary: AttacherBinary, round: number, params: ThroughputParams, loadOnlyPath: string): Promise<RunResult> {
  await removeOwnPvs(ctx.ground, ctx.ownPvs);
  const loadOnly = binary.kind === "floor" ? await runIdle(ctx, { kind: "floor", path: loadOnlyPath }, round, params) : undefined;
  const idle = await runIdle(ctx, binary, round, params);
  const cycle = await runThroughput(ctx, binary, round, params);
  const pick = (metrics: Readonly<Record<string, number>>, names: readonly string[]) => Object.fromEntries(names.map((n) => [n, metrics[n] ?? Number.NaN]));
  return {
    kind: binary.kind,
    round,
    metrics: {
      ...pick(idle.metrics, ["idleRssMiB", "idleAnonMiB", "idleExecutableMiB", "idleOtherFileMiB"]),
      ...pick(cycle.metrics, ["cpuSecondsPer1000", "peakRssMiB", "attachSeconds", "detachSeconds"]),
      ...pick(cycle.metrics, ["gcAllocatedKiBPerCycle", "gcCollections"].filter((n) => cycle.metrics[n] !== undefined)),
      ...(loadOnly === undefined ? {} : { loadOnlyIdleRssMiB: loadOnly.metrics["idleRssMiB"] ?? Number.NaN, loadOnlyIdleAnonMiB: loadOnly.metrics["idleAnonMiB"] ?? Number.NaN }),
    },
    ...(cycle.attachedCurve === undefined ? {} : { attachedCurve: cycle.attachedCurve }),
    ...(cycle.rssCurve === undefined ? {} : { rssCurve: cycle.rssCurve }),
    notes: [...(loadOnly?.notes ?? []).map((line) => `load-only: ${line}`), ...(idle.notes ?? []), ...(cycle.notes ?? [])],
  };
}
