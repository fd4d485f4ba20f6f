import { describe, expect, it } from "bun:test";
import { IdleCollector } from "../../../src/util/idle-collector";

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
});
