import { describe, expect, it } from "bun:test";
import { summarize } from "../lib/ratios";
import type { ScenarioResult } from "../lib/results";
import { median, percentile } from "../lib/stats";

describe("bench statistics", () => {
  it("takes the median as the middle value, or the mean of the middle two", () => {
    expect([median([3, 1, 2]), median([4, 1, 3, 2]), median([])]).toEqual([2, 2.5, Number.NaN]);
  });

  it("takes percentiles by nearest rank", () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect([percentile(values, 50), percentile(values, 90), percentile(values, 99), percentile(values, 100), percentile([7], 99)]).toEqual([50, 90, 99, 100, 7]);
  });
});

describe("bench ratios", () => {
  it("pairs ours with Go round by round and reports the median pair ratio, skipping rounds one side lacks", () => {
    const scenario: ScenarioResult = {
      id: "t",
      title: "t",
      params: {},
      notes: [],
      metrics: [{ name: "x", unit: "s", better: "lower", description: "" }],
      runs: [
        { kind: "ours", round: 1, metrics: { x: 2 } },
        { kind: "go", round: 1, metrics: { x: 4 } },
        { kind: "ours", round: 2, metrics: { x: 6 } },
        { kind: "go", round: 2, metrics: { x: 3 } },
        { kind: "ours", round: 3, metrics: { x: 1 } },
        { kind: "go", round: 3, metrics: { x: 1 } },
        { kind: "ours", round: 4, metrics: { x: 100 } },
      ],
    };
    expect(summarize(scenario)).toEqual([{ metric: "x", unit: "s", better: "lower", ours: 4, go: 3, ratio: 1, pairs: 3 }]);
  });
});
