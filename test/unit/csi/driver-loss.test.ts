import { describe, expect, it } from "bun:test";
import { meaningOfDriverLoss } from "../../../src/csi/driver-loss";
import { FakeClock } from "../queue/fake-clock";

/** Lets the promise chains that a fake clock step resolved run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("a lost driver connection", () => {
  it("is part of the shutdown when the stop signal came first", async () => {
    const stop = new AbortController();
    stop.abort();
    const clock = new FakeClock();
    expect(await meaningOfDriverLoss({ stopping: stop.signal, clock })).toBe("shutting-down");
    expect(clock.pendingTimers()).toBe(0);
  });

  it("is part of the shutdown when the stop signal follows within the signals' spread", async () => {
    const stop = new AbortController();
    const clock = new FakeClock();
    const meaning = meaningOfDriverLoss({ stopping: stop.signal, signalSpreadMs: 1_000, clock });
    clock.step(999);
    stop.abort();
    expect(await meaning).toBe("shutting-down");
    expect(clock.pendingTimers()).toBe(0);
  });

  it("is a lost driver when no stop signal comes within the spread, and one that comes later changes nothing", async () => {
    const stop = new AbortController();
    const clock = new FakeClock();
    let meaning: string | undefined;
    void meaningOfDriverLoss({ stopping: stop.signal, signalSpreadMs: 1_000, clock }).then((m) => (meaning = m));
    clock.step(999);
    await settle();
    expect(meaning).toBeUndefined();
    clock.step(1);
    await settle();
    stop.abort();
    await settle();
    expect(meaning).toBe("lost");
  });
});
