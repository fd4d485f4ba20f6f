import { describe, expect, it } from "bun:test";
import { WorkQueue, type WorkQueueGetResult } from "../../../src/queue/work-queue";
import { runWorkerPool } from "../../../src/queue/worker-pool";
import { FakeClock } from "./fake-clock";
import { settle } from "./settle";

/** A queue that counts the gets asked of it and how many are pending. */
class CountingQueue extends WorkQueue<string> {
  gets = 0;
  pending = 0;
  override async get(): Promise<WorkQueueGetResult<string>> {
    this.gets++;
    this.pending++;
    try {
      return await super.get();
    } finally {
      this.pending--;
    }
  }
}

/** Items are processed until released, one by one or all. */
function heldProcessing() {
  const started: string[] = [];
  const finished: string[] = [];
  const releases = new Map<string, () => void>();
  const process = (item: string) =>
    new Promise<void>((resolve) => {
      started.push(item);
      releases.set(item, () => {
        finished.push(item);
        resolve();
      });
    });
  const release = (item: string) => releases.get(item)?.();
  return { started, finished, process, release };
}

describe("runWorkerPool", () => {
  it("processes at most `workers` items at once, and takes the next as soon as one is done", async () => {
    const queue = new WorkQueue<string>({ name: "test", clock: new FakeClock() });
    const work = heldProcessing();
    const running = runWorkerPool(queue, 2, work.process);
    for (const item of ["a", "b", "c", "d"]) queue.add(item);
    await settle();
    const atFirst = [...work.started];
    work.release("b");
    await settle();
    const afterB = [...work.started];
    queue.shutDown();
    for (const item of ["a", "c"]) work.release(item);
    await running;
    expect({ atFirst, afterB, finished: work.finished, leftQueued: queue.len() }).toEqual({ atFirst: ["a", "b"], afterB: ["a", "b", "c"], finished: ["b", "a", "c"], leftQueued: 0 });
  });

  it("keeps a single get pending while idle, however many workers it may run", async () => {
    const queue = new CountingQueue({ name: "test", clock: new FakeClock() });
    const running = runWorkerPool(queue, 1_000, async () => {});
    await settle();
    const idle = { gets: queue.gets, pending: queue.pending };
    queue.add("a");
    await settle();
    const afterOne = { gets: queue.gets, pending: queue.pending };
    queue.shutDown();
    await running;
    expect({ idle, afterOne }).toEqual({ idle: { gets: 1, pending: 1 }, afterOne: { gets: 2, pending: 1 } });
  });

  it("calls done for every item it took, so an item added while processed comes out again", async () => {
    const queue = new WorkQueue<string>({ name: "test", clock: new FakeClock() });
    const work = heldProcessing();
    const running = runWorkerPool(queue, 4, work.process);
    queue.add("a");
    await settle();
    queue.add("a");
    await settle();
    const whileHeld = [...work.started];
    work.release("a");
    await settle();
    const afterDone = [...work.started];
    queue.shutDown();
    work.release("a");
    await running;
    expect({ whileHeld, afterDone }).toEqual({ whileHeld: ["a"], afterDone: ["a", "a"] });
  });

  it("after shutDown starts nothing queued and resolves once the items in flight are done", async () => {
    const queue = new WorkQueue<string>({ name: "test", clock: new FakeClock() });
    const work = heldProcessing();
    const running = runWorkerPool(queue, 1, work.process);
    queue.add("in-flight");
    queue.add("queued");
    await settle();
    queue.shutDown();
    let returned = false;
    void running.then(() => (returned = true));
    await settle();
    const beforeRelease = returned;
    work.release("in-flight");
    await running;
    expect({ beforeRelease, started: work.started }).toEqual({ beforeRelease: false, started: ["in-flight"] });
  });
});
