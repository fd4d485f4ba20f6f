import { describe, expect, it } from "bun:test";
import { realClock } from "../../../src/util/clock";
import { FakeClock } from "../queue/fake-clock";

describe("realClock", () => {
  it("reads the wall clock", () => {
    const before = Date.now();
    const now = realClock.now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });

  it("runs a scheduled callback, and not a cleared one", async () => {
    const ran: string[] = [];
    const cleared = realClock.setTimeout(() => ran.push("cleared"), 0);
    realClock.clearTimeout(cleared);
    await new Promise<void>((resolve) => realClock.setTimeout(resolve, 0));
    expect(ran).toEqual([]);
  });
});

describe("FakeClock", () => {
  it("fires due timers in time order as it steps, reading each due time", () => {
    const clock = new FakeClock(0);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push(`b@${clock.now()}`), 20);
    clock.setTimeout(() => {
      fired.push(`a@${clock.now()}`);
      clock.setTimeout(() => fired.push(`c@${clock.now()}`), 15);
    }, 10);
    clock.setTimeout(() => fired.push(`late@${clock.now()}`), 100);
    clock.step(30);
    expect([fired, clock.now(), clock.pendingTimers()]).toEqual([["a@10", "b@20", "c@25"], 30, 1]);
  });
});
