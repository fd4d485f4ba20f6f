import { describe, expect, it } from "bun:test";
import type { WorkQueueObserver } from "../../../src/metrics/work-queue-observer";
import { ItemExponentialFailureRateLimiter } from "../../../src/queue/rate-limiter";
import { WorkQueue, type WorkQueueGetResult } from "../../../src/queue/work-queue";
import { FakeClock } from "./fake-clock";
import { settle, track } from "./settle";

function newQueue(clock = new FakeClock(), metrics?: WorkQueueObserver): WorkQueue {
  return new WorkQueue({
    name: "test",
    clock,
    rateLimiter: new ItemExponentialFailureRateLimiter({ baseDelayMs: 100, maxDelayMs: 1000 }),
    ...(metrics === undefined ? {} : { metrics }),
  });
}

/** Takes the next item, failing the test if the queue says it is shut down. */
async function next(queue: WorkQueue): Promise<string> {
  const result = await queue.get();
  if (result.shutdown) throw new Error("queue unexpectedly shut down");
  return result.item;
}

/** Takes every item available right now without waiting. */
async function drain(queue: WorkQueue): Promise<string[]> {
  const items: string[] = [];
  while (queue.len() > 0) items.push(await next(queue));
  return items;
}

const item = (name: string): WorkQueueGetResult<string> => ({ item: name, shutdown: false });

describe("WorkQueue", () => {
  it("hands items out in the order they were added", async () => {
    const queue = newQueue();
    for (const name of ["c", "a", "b"]) queue.add(name);
    expect(await drain(queue)).toEqual(["c", "a", "b"]);
  });

  it("adding an item that is already queued is a no-op", async () => {
    const queue = newQueue();
    queue.add("a");
    queue.add("b");
    queue.add("a");
    expect(queue.len()).toBe(2);
    expect(await drain(queue)).toEqual(["a", "b"]);
  });

  it("never hands one item to two workers at once", async () => {
    const queue = newQueue();
    queue.add("a");
    expect(await next(queue)).toBe("a");
    queue.add("a");
    const second = track(queue.get());
    await settle();
    expect(second.value()).toBeUndefined();
    expect(queue.len()).toBe(0);
    queue.done("a");
    expect(await second.promise).toEqual(item("a"));
  });

  it("re-adds an item added during processing once done is called", async () => {
    const queue = newQueue();
    queue.add("a");
    await next(queue);
    queue.add("a");
    queue.add("a");
    queue.done("a");
    expect(await drain(queue)).toEqual(["a"]);
  });

  it("does not re-add an item that was not added during processing", async () => {
    const queue = newQueue();
    queue.add("a");
    await next(queue);
    queue.done("a");
    expect(queue.len()).toBe(0);
  });

  it("ignores done for an item nobody holds", async () => {
    const queue = newQueue();
    queue.add("a");
    queue.done("a");
    queue.done("a");
    expect(await drain(queue)).toEqual(["a"]);
  });

  it("wakes waiting gets in the order they called", async () => {
    const queue = newQueue();
    const first = queue.get();
    const second = queue.get();
    const third = queue.get();
    queue.add("x");
    queue.add("y");
    queue.add("z");
    expect(await Promise.all([first, second, third])).toEqual([item("x"), item("y"), item("z")]);
  });

  it("hands an item added during a get to that get only", async () => {
    const queue = newQueue();
    const first = track(queue.get());
    const second = track(queue.get());
    queue.add("a");
    await settle();
    expect([first.value(), second.value()]).toEqual([item("a"), undefined]);
  });

  it("shutDown wakes every waiting get", async () => {
    const queue = newQueue();
    const gets = [queue.get(), queue.get(), queue.get()];
    queue.shutDown();
    expect(await Promise.all(gets)).toEqual([{ shutdown: true }, { shutdown: true }, { shutdown: true }]);
    expect(queue.shuttingDown()).toBe(true);
  });

  it("still hands out queued items after shutDown, then reports shutdown", async () => {
    const queue = newQueue();
    queue.add("a");
    queue.shutDown();
    expect(await queue.get()).toEqual(item("a"));
    expect(await queue.get()).toEqual({ shutdown: true });
  });

  it("ignores adds after shutDown", async () => {
    const queue = newQueue();
    queue.shutDown();
    queue.add("a");
    queue.addAfter("b", 10);
    queue.addRateLimited("c");
    expect(queue.len()).toBe(0);
    expect(await queue.get()).toEqual({ shutdown: true });
  });

  it("reports queue and processing times to its metrics", async () => {
    const clock = new FakeClock();
    const events: string[] = [];
    const metrics: WorkQueueObserver = {
      add: () => events.push("add"),
      get: (queuedSeconds) => events.push(`get ${queuedSeconds}`),
      done: (processingSeconds) => events.push(`done ${processingSeconds}`),
      retry: () => events.push("retry"),
    };
    const queue = newQueue(clock, metrics);
    queue.add("a");
    queue.add("a");
    clock.step(2000);
    await next(queue);
    clock.step(500);
    queue.done("a");
    queue.addRateLimited("a");
    queue.addAfter("b", 0);
    expect(events).toEqual(["add", "get 2", "done 0.5", "retry", "retry", "add"]);
  });

  it("measures unfinished work from the clock", async () => {
    const clock = new FakeClock();
    const queue = newQueue(clock);
    expect([queue.unfinishedWorkSeconds(), queue.longestRunningProcessorSeconds()]).toEqual([0, 0]);
    queue.add("a");
    queue.add("b");
    await next(queue);
    clock.step(3000);
    await next(queue);
    clock.step(1000);
    expect([queue.unfinishedWorkSeconds(), queue.longestRunningProcessorSeconds()]).toEqual([5, 4]);
    queue.done("a");
    expect([queue.unfinishedWorkSeconds(), queue.longestRunningProcessorSeconds()]).toEqual([1, 1]);
  });

  it("reports the item that has waited longest, counting from the add that made it dirty", async () => {
    const clock = new FakeClock();
    const queue = newQueue(clock);
    expect(queue.oldestWaiting()).toBeUndefined();
    queue.add("a");
    clock.step(1000);
    queue.add("b");
    clock.step(500);
    // A second add of a queued item does not restart its wait.
    queue.add("a");
    expect(queue.oldestWaiting()).toEqual({ item: "a", seconds: 1.5 });
    expect(await next(queue)).toBe("a");
    expect(queue.oldestWaiting()).toEqual({ item: "b", seconds: 0.5 });
    // Added while a worker holds it: waiting again, from now.
    queue.add("a");
    clock.step(2000);
    expect(await next(queue)).toBe("b");
    expect(queue.oldestWaiting()).toEqual({ item: "a", seconds: 2 });
    queue.done("a");
    expect(await next(queue)).toBe("a");
    expect(queue.oldestWaiting()).toBeUndefined();
  });

  it("does not count an item parked by addAfter as waiting until its delay is over", () => {
    const clock = new FakeClock();
    const queue = newQueue(clock);
    queue.addAfter("a", 1000);
    expect(queue.oldestWaiting()).toBeUndefined();
    clock.step(1500);
    expect(queue.oldestWaiting()).toEqual({ item: "a", seconds: 0.5 });
  });

  it("counts an item as queued or processing from its add until done, and one parked by addAfter only once its delay is over", async () => {
    const clock = new FakeClock();
    const queue = newQueue(clock);
    const states: Record<string, boolean>[] = [];
    const snapshot = () => states.push({ a: queue.queuedOrProcessing("a"), b: queue.queuedOrProcessing("b") });
    snapshot();
    queue.add("a");
    queue.addAfter("b", 1000);
    snapshot();
    await next(queue);
    snapshot();
    queue.done("a");
    clock.step(1000);
    snapshot();
    expect(states).toEqual([
      { a: false, b: false },
      { a: true, b: false },
      { a: true, b: false },
      { a: false, b: true },
    ]);
  });

  it("counts an item added during processing as queued or processing after its worker is done", async () => {
    const queue = newQueue();
    queue.add("a");
    await next(queue);
    queue.add("a");
    queue.done("a");
    expect(queue.queuedOrProcessing("a")).toBe(true);
    await next(queue);
    queue.done("a");
    expect(queue.queuedOrProcessing("a")).toBe(false);
  });

  it("exposes its name", () => {
    expect(newQueue().name).toBe("test");
  });
});

describe("WorkQueue delaying", () => {
  it("adds an item only once its delay has passed", async () => {
    const clock = new FakeClock();
    const queue = newQueue(clock);
    queue.addAfter("a", 100);
    clock.step(99);
    expect(queue.len()).toBe(0);
    clock.step(1);
    expect(await drain(queue)).toEqual(["a"]);
  });

  it("keeps a delayed item waiting its whole delay when the wall clock jumps forward", async () => {
    const clock = new FakeClock();
    const queue = newQueue(clock);
    queue.addAfter("soon", 100);
    queue.addAfter("later", 1_000);
    clock.stepWall(3_600_000);
    clock.step(100);
    expect(await drain(queue)).toEqual(["soon"]);
    clock.step(899);
    expect(queue.len()).toBe(0);
    clock.step(1);
    expect(await drain(queue)).toEqual(["later"]);
  });

  it("adds at once when the delay is zero or negative", () => {
    const queue = newQueue();
    queue.addAfter("a", 0);
    queue.addAfter("b", -5);
    expect(queue.len()).toBe(2);
  });

  it("adds delayed items in ready-time order", async () => {
    const clock = new FakeClock();
    const queue = newQueue(clock);
    queue.addAfter("late", 300);
    queue.addAfter("early", 100);
    queue.addAfter("middle", 200);
    clock.step(1000);
    expect(await drain(queue)).toEqual(["early", "middle", "late"]);
  });

  it("addAfter keeps the earlier ready time", async () => {
    const clock = new FakeClock();
    const queue = newQueue(clock);
    queue.addAfter("a", 50);
    queue.addAfter("a", 500);
    clock.step(50);
    expect(await drain(queue)).toEqual(["a"]);
    queue.done("a");
    clock.step(1000);
    expect(queue.len()).toBe(0);
  });

  it("addAfter moves a later ready time earlier", async () => {
    const clock = new FakeClock();
    const queue = newQueue(clock);
    queue.addAfter("a", 500);
    queue.addAfter("a", 50);
    clock.step(50);
    expect(await drain(queue)).toEqual(["a"]);
    queue.done("a");
    clock.step(1000);
    expect(queue.len()).toBe(0);
  });

  it("wakes a waiting get when a delayed item becomes ready", async () => {
    const clock = new FakeClock();
    const queue = newQueue(clock);
    const got = track(queue.get());
    queue.addAfter("a", 100);
    await settle();
    expect(got.value()).toBeUndefined();
    clock.step(100);
    expect(await got.promise).toEqual(item("a"));
  });

  it("shutDown drops pending delayed adds and their timer", () => {
    const clock = new FakeClock();
    const queue = newQueue(clock);
    queue.addAfter("a", 100);
    queue.shutDown();
    expect(clock.pendingTimers()).toBe(0);
    clock.step(1000);
    expect(queue.len()).toBe(0);
  });

  it("keeps a single timer however many items wait", () => {
    const clock = new FakeClock();
    const queue = newQueue(clock);
    for (let i = 0; i < 100; i++) queue.addAfter(`va-${i}`, 1000 - i);
    expect(clock.pendingTimers()).toBe(1);
    clock.step(1000);
    expect(queue.len()).toBe(100);
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe("WorkQueue rate limiting", () => {
  it("delays addRateLimited by base * 2^failures, capped at max", async () => {
    const clock = new FakeClock();
    const queue = newQueue(clock);
    const readyAfter: number[] = [];
    for (let i = 0; i < 6; i++) {
      queue.addRateLimited("a");
      let waited = 0;
      // Bounded so a regression fails instead of spinning forever.
      while (queue.len() === 0 && waited < 10_000) {
        clock.step(10);
        waited += 10;
      }
      readyAfter.push(waited);
      queue.done(await next(queue));
    }
    expect(readyAfter).toEqual([100, 200, 400, 800, 1000, 1000]);
  });

  it("forget resets the failure count", async () => {
    const clock = new FakeClock();
    const queue = newQueue(clock);
    for (const delay of [100, 200]) {
      queue.addRateLimited("a");
      clock.step(delay);
      queue.done(await next(queue));
    }
    queue.forget("a");
    queue.addRateLimited("a");
    clock.step(99);
    expect(queue.len()).toBe(0);
    clock.step(1);
    expect(queue.len()).toBe(1);
  });
});

describe("WorkQueue lanes", () => {
  /** Lane 1 holds the names starting with "d" and may hold at most `detachCap` workers; lane 0 is uncapped. */
  function lanedQueue(detachCap: number): WorkQueue {
    return new WorkQueue({ name: "test", clock: new FakeClock(), lanes: { count: 2, of: (name) => (name.startsWith("d") ? 1 : 0), maxProcessing: [Number.POSITIVE_INFINITY, detachCap] } });
  }

  it("holds a capped lane's items back while they fill its share of the workers, and hands out the other lane's meanwhile", async () => {
    const queue = lanedQueue(2);
    for (const name of ["d1", "d2", "d3", "d4"]) queue.add(name);
    const held = [await next(queue), await next(queue)];
    const third = track(queue.get());
    await settle();
    const whileCapped = third.value();
    queue.add("a1");
    expect({ held, whileCapped, third: await third.promise, waiting: queue.len() }).toEqual({ held: ["d1", "d2"], whileCapped: undefined, third: item("a1"), waiting: 2 });
  });

  it("hands a capped lane's next item to a waiting worker as soon as one of its items is done", async () => {
    const queue = lanedQueue(1);
    queue.add("d1");
    queue.add("d2");
    expect(await next(queue)).toBe("d1");
    const waiting = track(queue.get());
    await settle();
    const beforeDone = waiting.value();
    queue.done("d1");
    expect({ beforeDone, afterDone: await waiting.promise }).toEqual({ beforeDone: undefined, afterDone: item("d2") });
  });

  it("counts an item held by a worker against the lane it was taken from, even if it comes back in another", async () => {
    let deleting = false;
    const queue = new WorkQueue({ name: "test", clock: new FakeClock(), lanes: { count: 2, of: () => (deleting ? 1 : 0), maxProcessing: [Number.POSITIVE_INFINITY, 1] } });
    queue.add("x");
    expect(await next(queue)).toBe("x");
    // Deleted while its attach runs: it comes back as a detach, and the detach lane is free.
    deleting = true;
    queue.add("x");
    queue.add("y");
    expect(await next(queue)).toBe("y");
    queue.done("x");
    const afterDone = track(queue.get());
    await settle();
    // y holds the detach lane's one slot; x waits for it.
    const whileYHeld = afterDone.value();
    queue.done("y");
    expect({ whileYHeld, afterYDone: await afterDone.promise }).toEqual({ whileYHeld: undefined, afterYDone: item("x") });
  });

  it("lets a cap below one hold one worker, so no lane starves", async () => {
    const queue = lanedQueue(0);
    queue.add("d1");
    expect(await next(queue)).toBe("d1");
  });

  it("hands out a capped lane's items after shutDown, to waiting and new gets, then reports shutdown", async () => {
    const queue = lanedQueue(1);
    for (const name of ["d1", "d2", "d3"]) queue.add(name);
    expect(await next(queue)).toBe("d1");
    const waiting = queue.get();
    queue.shutDown();
    expect([await waiting, await queue.get(), await queue.get()]).toEqual([item("d2"), item("d3"), { shutdown: true }]);
  });
});
