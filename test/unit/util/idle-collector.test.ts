import { describe, expect, it } from "bun:test";
import { IdleCollector } from "../../../src/util/idle-collector";
import { FakeClock } from "../queue/fake-clock";

describe("idle collector", () => {
  it("collects once after a burst of changes, in the first period without any, and not for a handful", () => {
    let collections = 0;
    const collector = new IdleCollector({ minChanges: 3, collect: () => collections++ });
    const outcomes: boolean[] = [];
    const period = (changes: number) => {
      for (let i = 0; i < changes; i++) collector.note();
      outcomes.push(collector.tick());
    };
    period(2); // a burst starts
    period(2); // still going: no pause while work arrives
    period(0); // quiet: collect
    period(0); // nothing new: nothing to collect
    period(2); // a handful of changes
    period(0); // quiet, but not worth a pause
    period(1); // the third change since the last collection
    period(0); // quiet again: collect
    expect({ outcomes, collections }).toEqual({ outcomes: [false, false, true, false, false, false, false, true], collections: 2 });
  });

  it("collects once after start-up whatever the lists held, then arms no timer while nothing changes, so an idle attacher is never woken by it", () => {
    const clock = new FakeClock();
    let collections = 0;
    const collector = new IdleCollector({ minChanges: 200, periodMs: 1000, clock, collect: () => collections++ });
    for (let i = 0; i < 5; i++) collector.note(); // a small cluster's first lists
    collector.run(new AbortController().signal);
    clock.step(60_000);
    expect({ collections, pending: clock.pendingTimers() }).toEqual({ collections: 1, pending: 0 });
  });

  it("collects in the first quiet period after a burst, then disarms until the next change", () => {
    const clock = new FakeClock();
    let collections = 0;
    const collector = new IdleCollector({ minChanges: 3, periodMs: 1000, clock, collect: () => collections++ });
    collector.run(new AbortController().signal);
    clock.step(1000); // start-up's collection
    collections = 0;
    for (let i = 0; i < 3; i++) collector.note();
    clock.step(1000); // the burst's period: no pause while work arrives
    collector.note();
    clock.step(1000); // still busy
    expect(collections).toBe(0);
    clock.step(1000); // quiet: collect
    expect(collections).toBe(1);
    expect(clock.pendingTimers()).toBe(0);
    clock.step(10_000);
    collector.note();
    expect(clock.pendingTimers()).toBe(1);
  });

  it("stops checking once its signal aborts", () => {
    const clock = new FakeClock();
    const stop = new AbortController();
    const collector = new IdleCollector({ minChanges: 1, periodMs: 1000, clock, collect: () => undefined });
    collector.run(stop.signal);
    collector.note();
    stop.abort();
    collector.note();
    expect(clock.pendingTimers()).toBe(0);
  });
});
