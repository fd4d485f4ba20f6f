/**
 * Scenario 6, fairness: with a slow driver and a backlog of detaches queued,
 * how long a new attach waits. Upstream puts attaches and detaches in one
 * queue served by one worker pool (upstream issue #761), so the new attach
 * waits for the backlog ahead of it. Ours keeps a worker that detaches may
 * not take, so the new attach should take one publish (issue 13's target:
 * at most 1.2 publishes), and the backlog drains one worker narrower.
 */
import type { AttacherBinary } from "../lib/attacher-under-test";
import { round3, type AttacherLimits, type BenchContext } from "../lib/bench-context";
import { createVa, createVas, deleteVas, fakeDriverOf, prepareOwnPvs, setDriverLatency } from "../lib/bench-ground";
import type { MetricSpec, RunResult } from "../lib/results";

export interface FairnessParams extends AttacherLimits {
  /** Detaches queued ahead of the new attach. */
  readonly backlog: number;
  /** Publish/unpublish latency of the slow driver. */
  readonly slowMs: number;
}

export const fairnessMetrics: readonly MetricSpec[] = [
  { name: "newAttachMs", unit: "ms", better: "lower", description: "create to attached of one VA created behind the detach backlog" },
  { name: "newAttachPublishes", unit: "publishes", better: "lower", description: "newAttachMs over the slow driver's publish latency: 1 is one publish and nothing else" },
  { name: "backlogSeconds", unit: "s", better: "lower", description: "first delete to the last backlog VA gone" },
];

export async function runFairness(ctx: BenchContext, binary: AttacherBinary, round: number, params: FairnessParams, baseLatencyMs: number): Promise<RunResult> {
  const label = `fair-r${round}`;
  const driver = fakeDriverOf(ctx.ground, "the fairness scenario");
  await prepareOwnPvs(ctx.ground, params.backlog + 1, ctx.ownPvs);
  const attacher = ctx.start(binary, label, params);
  try {
    await attacher.waitReady();
    ctx.watch.forget();
    const names = await createVas(ctx.ground.admin, `${label}-${binary.kind}`, params.backlog);
    const attachedStatus = () => `${label} ${binary.kind}: attached ${ctx.watch.countAttached(names)}/${names.length}`;
    await ctx.waitFor(`${label}: backlog attached`, () => ctx.watch.countAttached(names) === names.length, attachedStatus, 300_000, [attacher.process]);
    await setDriverLatency(driver, params.slowMs);
    const deleteStarted = performance.now();
    await deleteVas(ctx.ground.admin, names);
    // Let the attacher's watch deliver the deletions, so they are queued ahead.
    await Bun.sleep(500);
    const newName = `${label}-${binary.kind}-new`;
    await createVa(ctx.ground.admin, newName, params.backlog);
    const createdAt = performance.now();
    await ctx.waitFor(`${label}: new VA attached`, () => ctx.watch.attachedAt.has(newName), () => `${label} ${binary.kind}: waiting for the new attach, ${ctx.watch.countGone(names)}/${names.length} detached`, 600_000, [attacher.process]);
    const newAttachMs = (ctx.watch.attachedAt.get(newName) ?? createdAt) - createdAt;
    await ctx.waitFor(`${label}: backlog gone`, () => ctx.watch.countGone(names) === names.length, () => `${label} ${binary.kind}: detached ${ctx.watch.countGone(names)}/${names.length}`, 600_000, [attacher.process]);
    const backlogSeconds = (Math.max(...names.map((n) => ctx.watch.goneAt.get(n) ?? deleteStarted)) - deleteStarted) / 1000;
    await setDriverLatency(driver, baseLatencyMs);
    await ctx.cleanUp([...names, newName], attacher, `${label} ${binary.kind}`, 300_000);
    return { kind: binary.kind, round, metrics: { newAttachMs: Math.round(newAttachMs), newAttachPublishes: round3(newAttachMs / params.slowMs), backlogSeconds: round3(backlogSeconds) } };
  } finally {
    await setDriverLatency(driver, baseLatencyMs);
    await attacher.stop();
  }
}
