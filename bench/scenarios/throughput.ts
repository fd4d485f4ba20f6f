/**
 * Scenario 1, throughput (and 5, CPU): N VAs created at once; time until all
 * are attached; then all deleted; time until all are gone. CPU is the
 * attacher's user+sys over the whole cycle, per 1,000 attach+detach cycles.
 */
import type { AttacherBinary, RunningAttacher } from "../lib/attacher-under-test";
import { rssCurve, round3, type AttacherLimits, type BenchContext } from "../lib/bench-context";
import { createVas, prepareOwnPvs } from "../lib/bench-ground";
import { tallyGcLog, type GcTally } from "../lib/jsc-gc-log";
import type { MetricSpec, RunResult } from "../lib/results";

/** ThroughputParams is one cell of the throughput matrix. */
export interface ThroughputParams extends AttacherLimits {
  readonly volumes: number;
}

export const throughputMetrics: readonly MetricSpec[] = [
  { name: "attachPerSecond", unit: "VA/s", better: "higher", description: "VAs attached per second, from the first create to the last attached" },
  { name: "attachSeconds", unit: "s", better: "lower", description: "first create to last VA attached" },
  { name: "detachSeconds", unit: "s", better: "lower", description: "first delete to last VA gone" },
  { name: "cpuSecondsPer1000", unit: "CPU s", better: "lower", description: "attacher user+sys CPU per 1,000 attach+detach cycles" },
  { name: "peakRssMiB", unit: "MiB", better: "lower", description: "VmHWM at the end of the run" },
  { name: "readyMs", unit: "ms", better: "lower", description: "exec to ready (no VAs waiting)" },
];

/** What a cycle adds under --gc-log (Bun programs only, bench/lib/jsc-gc-log.ts). */
const gcCycleMetrics: readonly MetricSpec[] = [
  { name: "gcAllocatedKiBPerCycle", unit: "KiB", better: "lower", description: "JS heap bytes allocated per attach+detach cycle, ready to last VA gone, from JSC's GC log (a lower bound)" },
  { name: "gcCollections", unit: "GCs", better: "lower", description: "JSC collections in the cycle" },
];

/** withGcMetrics is `metrics` plus the GC log's figures when this run has it on (run.ts's --gc-log), so other runs' reports carry no empty rows. */
export function withGcMetrics(metrics: readonly MetricSpec[]): readonly MetricSpec[] {
  return gcLogOn() ? [...metrics, ...gcCycleMetrics] : metrics;
}

/** gcLogOn: run.ts set JSC's GC log for the attachers it starts (--gc-log). */
function gcLogOn(): boolean {
  return process.env["BUN_JSC_logGC"] === "1";
}

/**
 * runThroughput runs one attacher through one create-all/delete-all cycle;
 * `extraArgs` (default none) are flags after the shared ones, e.g. the
 * --http-endpoint a Prometheus scrapes.
 */
export async function runThroughput(ctx: BenchContext, binary: AttacherBinary, round: number, params: ThroughputParams, extraArgs: readonly string[] = []): Promise<RunResult> {
  const label = `tp-w${params.workers}-q${params.qps}-r${round}`;
  await prepareOwnPvs(ctx.ground, params.volumes, ctx.ownPvs);
  await ctx.ground.fake?.control.clearCalls();
  const attacher = ctx.start(binary, label, params, { extraArgs });
  try {
    const readyMs = await attacher.waitReady();
    ctx.watch.forget();
    const logAtReady = attacher.logBytes();
    const cpuStart = attacher.cpuSeconds();
    const t0 = performance.now();
    // Throughput at the default limits is ~1-2 VA/s: give it time.
    const timeoutMs = 120_000 + (params.volumes * 4_000) / Math.min(params.qps, 50);
    const names = await createVas(ctx.ground.admin, `${label}-${binary.kind}`, params.volumes);
    const status = () => `${label} ${binary.kind}: attached ${ctx.watch.countAttached(names)}/${names.length}`;
    await ctx.waitFor(`${label}: all attached`, () => ctx.watch.countAttached(names) === names.length, status, timeoutMs, [attacher.process]);
    const attachedAt = Math.max(...names.map((n) => ctx.watch.attachedAt.get(n) ?? t0));
    const detachMs = await ctx.cleanUp(names, attacher, `${label} ${binary.kind}`, timeoutMs);
    const cpu = attacher.cpuSeconds() - cpuStart;
    const attachSeconds = (attachedAt - t0) / 1000;
    // Under --gc-log: the collections after ready, counted from the heap the last one before it left.
    const gc = gcLogOn() ? await gcAfterReady(attacher, logAtReady) : undefined;
    return {
      kind: binary.kind,
      round,
      metrics: {
        attachPerSecond: round3(params.volumes / attachSeconds),
        attachSeconds: round3(attachSeconds),
        detachSeconds: round3(detachMs / 1000),
        cpuSecondsPer1000: round3((cpu * 1000) / params.volumes),
        peakRssMiB: round3(attacher.hwmBytes() / 1048576),
        readyMs: Math.round(readyMs),
        ...(gc === undefined ? {} : { gcAllocatedKiBPerCycle: round3(gc.allocatedBytes / 1024 / params.volumes), gcCollections: gc.collections }),
      },
      ...(gc === undefined ? {} : { notes: [`${binary.kind} r${round}: ${gc.collections} collections after ready, ${gc.byThreshold} of them by the allocation threshold; ${round3(gc.allocatedBytes / 1048576)} MiB allocated before them`] }),
      attachedCurve: ctx.attachedCurve(names, t0),
      rssCurve: rssCurve(attacher),
    };
  } finally {
    await attacher.stop();
  }
}

/** gcAfterReady tallies the GC log's collections after byte `logAtReady` of the attacher's log; undefined without any (Go's log). */
async function gcAfterReady(attacher: RunningAttacher, logAtReady: number): Promise<GcTally | undefined> {
  const beforeReady = tallyGcLog(await Bun.file(attacher.process.stderrPath).slice(0, logAtReady).text(), 0);
  const tally = tallyGcLog(await attacher.logSince(logAtReady), beforeReady.lastHeapKb);
  return tally.collections === 0 ? undefined : tally;
}
