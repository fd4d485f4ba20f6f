import { describe, expect, it } from "bun:test";
import type { BenchResults, ScenarioResult } from "../lib/results";
import { memorySlope, scaleChartsHtml, scalePoints, scaleScenarios } from "../report/scale-charts";

function scaleRun(n: number, ours: number, go: number): ScenarioResult {
  return {
    id: `scale-n${n}`,
    title: `Scale ${n}`,
    params: { n },
    metrics: [{ name: "rssSettledMiB", unit: "MiB", better: "lower", description: "" }],
    runs: [
      { kind: "ours", round: 1, metrics: { rssSettledMiB: ours } },
      { kind: "go", round: 1, metrics: { rssSettledMiB: go } },
    ],
    notes: [],
  };
}

describe("scale report", () => {
  const results = { machine: {}, scenarios: [scaleRun(10_000, 110, 210), scaleRun(1000, 87, 112), { ...scaleRun(5, 1, 1), id: "memory" }] } as unknown as BenchResults;

  it("takes the scale runs smallest N first and plots each attacher's value against N", () => {
    const scenarios = scaleScenarios(results);
    expect({ ns: scenarios.map((s) => s.params.n), go: scalePoints(scenarios, "rssSettledMiB", "go") }).toEqual({ ns: [1000, 10_000], go: [[1000, 112], [10_000, 210]] });
  });

  it("gives the memory per 1,000 VAs between the smallest and the largest N", () => {
    const scenarios = scaleScenarios(results);
    expect([memorySlope(scenarios, "ours"), memorySlope(scenarios, "go")].map((x) => Math.round(x * 1000) / 1000)).toEqual([2.556, 10.889]);
  });

  it("draws one chart per metric, and nothing without a scale run", () => {
    expect(scaleChartsHtml(results).match(/<svg/g)?.length).toBe(1);
    expect(scaleChartsHtml({ ...results, scenarios: [] })).toBe("");
  });
});
