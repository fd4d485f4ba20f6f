/**
 * One cycle of a running attacher as bench/ab.ts and bench/jit-profile.ts
 * run it: N VAs created at once, all attached, all deleted, all gone.
 */
import { waitForCondition } from "../../test/ground/managed-process";
import type { RunningAttacher } from "./attacher-under-test";
import { createVas, deleteVas, type BenchGround } from "./bench-ground";
import type { VaWatch } from "./va-watch";

/** How long a cycle's VAs may take to be attached, and to be gone. */
const cycleStepTimeoutMs = 120_000;

/**
 * runVaCycle creates `count` VAs named after `batch`, waits until the
 * watch sees them all attached, deletes them and waits until all are gone;
 * it fails after 120 s a step, or at once if the attacher exits.
 */
export async function runVaCycle(ground: BenchGround, watch: VaWatch, attacher: RunningAttacher, batch: string, count: number): Promise<void> {
  watch.forget();
  const names = await createVas(ground.admin, batch, count);
  const until = (done: () => boolean, step: string) => waitForCondition(done, { description: `${batch}: ${step}`, timeoutMs: cycleStepTimeoutMs, watch: [attacher.process], intervalMs: 20 });
  await until(() => watch.countAttached(names) === names.length, "attached");
  await deleteVas(ground.admin, names);
  await until(() => watch.countGone(names) === names.length, "gone");
}
