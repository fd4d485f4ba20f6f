import { describe, expect, it } from "bun:test";
import { ChurnCollector } from "../../../src/util/churn-collector";

/** A collector on 1 s ticks whose collections are counted, and a way to run one tick after some changes. */
function countingCollector(options: { minChanges: number; busyIntervalMs?: number }) {
  let collections = 0;
  const collector = new ChurnCollector({ ...options, periodMs: 1000, collect: () => collections++ });
  const outcomes: boolean[] = [];
  const period = (changes: number) => {
    for (let i = 0; i < changes; i++) collector.note();
    outcomes.push(collector.tick());
  };
  return { period, outcomes, collections: () => collections };
}

describe("churn collector", () => {
  it("collects once after a burst of changes, in the first period without any, and not for a handful", () => {
    const { period, outcomes, collections } = countingCollector({ minChanges: 3 });
    period(2); // a burst starts
    period(2); // still going: no pause while work arrives
    period(0); // quiet: collect
    period(0); // nothing new: nothing to collect
    period(2); // a handful of changes
    period(0); // quiet, but not worth a pause
    period(1); // the third change since the last collection
    period(0); // quiet again: collect
    expect({ outcomes, collections: collections() }).toEqual({ outcomes: [false, false, true, false, false, false, false, true], collections: 2 });
  });

  it("collects once per busy interval under churn that never pauses, counting from the last collection", () => {
    const { period, outcomes, collections } = countingCollector({ minChanges: 3, busyIntervalMs: 5000 });
    for (let second = 0; second < 12; second++) period(1);
    // Ticks 5 and 10 end a busy interval each with three or more changes.
    expect({ outcomes: outcomes.flatMap((collected, tick) => (collected ? [tick + 1] : [])), collections: collections() }).toEqual({ outcomes: [5, 10], collections: 2 });
  });

  it("does not collect at the busy interval for fewer changes than are worth a pause", () => {
    const { period, outcomes } = countingCollector({ minChanges: 10, busyIntervalMs: 3000 });
    for (let second = 0; second < 6; second++) period(1);
    expect(outcomes).toEqual([false, false, false, false, false, false]);
  });
});
