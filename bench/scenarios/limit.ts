/**
 * Scenario 7, the limit: a bare client makes exactly the API writes an
 * attacher makes per VA (bench/lib/bare-client-writes.ts), with no CSI call,
 * no list, no watch and no cache, at the throughput cell's worker count. It
 * is handed each VA's name as the bench's create (or delete) of it returns,
 * and is timed the way the throughput scenario times an attacher: first
 * create to last attached as seen by the bench's watch, then first delete to
 * last VA gone. Its rate is the ceiling either attacher could reach here.
 */
import type { AdminClient } from "../../test/ground/admin-client";
import { attachWrites, detachWrites, type BareWrite } from "../lib/bare-client-writes";
import { round3, type BenchContext } from "../lib/bench-context";
import { createVas, deleteVas, ownPvName, prepareOwnPvs, pvFinalizer, vaNode } from "../lib/bench-ground";
import { createFedPool } from "../lib/fed-pool";
import type { LimitRun } from "../lib/results";
import type { ThroughputParams } from "./throughput";

/** runLimit runs the bare client through one create-all/delete-all cycle of a throughput cell. */
export async function runLimit(ctx: BenchContext, round: number, params: ThroughputParams): Promise<LimitRun> {
  const label = `limit-w${params.workers}-r${round}`;
  const { admin } = ctx.ground;
  await prepareOwnPvs(ctx.ground, params.volumes, ctx.ownPvs);
  const handles = await Promise.all(Array.from({ length: params.volumes }, (_, i) => ctx.ground.volumeHandle(i)));
  ctx.watch.forget();
  const timeoutMs = 120_000 + params.volumes * 40;

  const attach = createFedPool<{ name: string; i: number }>(params.workers, async ({ name, i }) => {
    const va = { name, pvName: ownPvName(i), nodeId: ctx.ground.nodeId(vaNode(i)), attachmentMetadata: { devicePath: `/dev/fake/${handles[i] ?? ""}` } };
    await send(admin, attachWrites(va, pvFinalizer));
  });
  const t0 = performance.now();
  const names = await createVas(admin, label, params.volumes, (name, _at, i) => attach.push({ name, i }));
  await attach.drain();
  const status = () => `${label}: attached ${ctx.watch.countAttached(names)}/${names.length}`;
  await ctx.waitFor(`${label}: all attached`, () => ctx.watch.countAttached(names) === names.length, status, timeoutMs);
  const attachedAt = Math.max(...names.map((n) => ctx.watch.attachedAt.get(n) ?? t0));

  const detach = createFedPool<string>(params.workers, (name) => send(admin, detachWrites(name)));
  const deleteStarted = performance.now();
  await deleteVas(admin, names, (name) => detach.push(name));
  await detach.drain();
  await ctx.waitFor(`${label}: VAs gone`, () => ctx.watch.countGone(names) === names.length, () => `${label}: gone ${ctx.watch.countGone(names)}/${names.length}`, timeoutMs);
  const goneAt = Math.max(deleteStarted, ...names.map((n) => ctx.watch.goneAt.get(n) ?? deleteStarted));

  const attachSeconds = (attachedAt - t0) / 1000;
  return {
    round,
    metrics: {
      attachPerSecond: round3(params.volumes / attachSeconds),
      attachSeconds: round3(attachSeconds),
      detachSeconds: round3((goneAt - deleteStarted) / 1000),
    },
  };
}

/** send makes one VA's writes in order, as one attacher worker would. */
async function send(admin: AdminClient, writes: readonly BareWrite[]): Promise<void> {
  for (const write of writes) await admin.patch(write.path, write.body, write.type);
}
