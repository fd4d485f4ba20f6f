import { describe, expect, it } from "bun:test";
import { AttachController, vaWorkKind } from "../../../src/controller/attach-controller";
import type { Handler } from "../../../src/controller/handler";
import { attachDetachLanes } from "../../../src/queue/attach-detach-lanes";
import type { PersistentVolume } from "../../../src/kube/objects/persistent-volume";
import { parseVolumeAttachment, type VolumeAttachment } from "../../../src/kube/objects/volume-attachment";
import { Store } from "../../../src/kube/store";
import { Logger } from "../../../src/log/logger";
import { WorkQueue } from "../../../src/queue/work-queue";
import { settle } from "../queue/settle";

function va(name: string, deleting: boolean): VolumeAttachment {
  return parseVolumeAttachment({
    metadata: { name, resourceVersion: "1", ...(deleting ? { deletionTimestamp: "2026-11-22T12:00:00Z" } : {}) },
    spec: { attacher: "d", nodeName: "n", source: { persistentVolumeName: `pv-${name}` } },
  });
}

/** Lets promise callbacks run until `condition` holds; fails after many turns with nothing left to run. */
async function until(condition: () => boolean): Promise<void> {
  for (let turn = 0; turn < 1_000 && !condition(); turn++) await settle();
  if (!condition()) throw new Error("condition never held");
}

/**
 * A controller over the VA queue with its lanes, whose handler holds every
 * detach (a slow ControllerUnpublish) until released and attaches at once,
 * recording the order operations started and ended.
 */
function slowDetachGround(workers: number) {
  const vas = new Store<VolumeAttachment>();
  const vaQueue = new WorkQueue<string>({ name: "csi-attacher-va", lanes: attachDetachLanes(vaWorkKind(vas), workers) });
  const events: string[] = [];
  const held: (() => void)[] = [];
  const handler: Handler = {
    syncVolumeAttachment: async (name, object) => {
      events.push(`start ${name}`);
      if (object?.metadata.deletionTimestamp) await new Promise<void>((resolve) => held.push(resolve));
      events.push(`end ${name}`);
      return undefined;
    },
    start: () => {},
    syncPersistentVolume: async () => {},
  };
  const controller = new AttachController({
    driverName: "d",
    handler,
    vas,
    pvs: new Store<PersistentVolume>(),
    vaQueue,
    pvQueue: new WorkQueue<string>({ name: "csi-attacher-pv" }),
    log: new Logger({ sink: () => {} }),
  });
  const stop = new AbortController();
  const running = controller.run(workers, stop.signal);
  const detachesStarted = () => events.filter((event) => event.startsWith("start detach-")).length;
  const releaseAll = async (total: number) => {
    while (events.filter((event) => event.startsWith("end detach-")).length < total) {
      held.shift()?.();
      await settle();
    }
  };
  const shutDown = async () => {
    stop.abort();
    await running;
  };
  return { vas, events, detachesStarted, releaseAll, shutDown };
}

describe("VA queue lanes", () => {
  it("hand a new attach to the next free worker however many detaches wait, and keep detaches moving", async () => {
    const vas = new Store<VolumeAttachment>();
    const queue = new WorkQueue<string>({ name: "csi-attacher-va", lanes: attachDetachLanes(vaWorkKind(vas), 4) });
    for (let i = 0; i < 50; i++) {
      vas.upsert(va(`detach-${i}`, true));
      queue.add(`detach-${i}`);
    }
    vas.upsert(va("attach-new", false));
    queue.add("attach-new");
    // A name the cache no longer holds only needs a no-op sync: it waits with the detaches.
    queue.add("gone");
    const order: string[] = [];
    for (let i = 0; i < 4; i++) {
      const next = await queue.get();
      if (!next.shutdown) order.push(next.item);
    }
    expect(order).toEqual(["attach-new", "detach-0", "detach-1", "detach-2"]);
  });

  it("keep one worker free of detaches, so behind 200 slow detaches a new attach waits for nothing but its own publish", async () => {
    const workers = 4;
    const ground = slowDetachGround(workers);
    for (let i = 0; i < 200; i++) ground.vas.upsert(va(`detach-${i}`, true));
    await until(() => ground.detachesStarted() === workers - 1);
    await settle();
    ground.vas.upsert(va("attach-new", false));
    await until(() => ground.events.includes("end attach-new"));
    // The attach started and ended while the first three detaches were still held, and no other detach started.
    expect(ground.events).toEqual(["start detach-0", "start detach-1", "start detach-2", "start attach-new", "end attach-new"]);
    await ground.releaseAll(200);
    expect(ground.events.filter((event) => event.startsWith("end detach-")).length).toBe(200);
    await ground.shutDown();
  });

  it("let detaches use the only worker with --worker-threads=1, so an attach waits for at most the detach in flight", async () => {
    const ground = slowDetachGround(1);
    for (let i = 0; i < 3; i++) ground.vas.upsert(va(`detach-${i}`, true));
    await until(() => ground.detachesStarted() === 1);
    ground.vas.upsert(va("attach-new", false));
    await settle();
    const whileHeld = [...ground.events];
    await ground.releaseAll(1);
    await until(() => ground.events.includes("end attach-new"));
    // The next detach may start beside it: only the order up to the attach's end is the rule.
    expect({ whileHeld, afterOneDetach: ground.events.slice(0, 4) }).toEqual({
      whileHeld: ["start detach-0"],
      afterOneDetach: ["start detach-0", "end detach-0", "start attach-new", "end attach-new"],
    });
    await ground.releaseAll(3);
    await ground.shutDown();
  });
});
