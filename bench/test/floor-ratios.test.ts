import { describe, expect, it } from "bun:test";
import { summarizeFloor, summarizeWithFloor } from "../lib/floor-ratios";
import type { ScenarioResult } from "../lib/results";

const scenario = (runs: ScenarioResult["runs"]): ScenarioResult => ({
  id: "floor",
  title: "floor",
  params: {},
  notes: [],
  metrics: [
    { name: "x", unit: "MiB", better: "lower", description: "" },
    { name: "loadOnly", unit: "MiB", better: "lower", description: "" },
  ],
  runs,
});

describe("bench ratios against Bun's floor", () => {
  it("pairs ours with the floor round by round, takes the median pair ratio, and keeps floor-only metrics without a ratio", () => {
    const rows = summarizeFloor(
      scenario([
        { kind: "ours", round: 1, metrics: { x: 90 } },
        { kind: "go", round: 1, metrics: { x: 70 } },
        { kind: "floor", round: 1, metrics: { x: 60, loadOnly: 45 } },
        { kind: "ours", round: 2, metrics: { x: 100 } },
        { kind: "floor", round: 2, metrics: { x: 80, loadOnly: 47 } },
        { kind: "floor", round: 3, metrics: { x: 70, loadOnly: 46 } },
      ]),
    );
    expect(rows).toEqual([
      { metric: "x", floor: 70, oursOverFloor: (1.5 + 1.25) / 2 },
      { metric: "loadOnly", floor: 46, oursOverFloor: Number.NaN },
    ]);
  });

  it("has no rows for a scenario the floor did not run in", () => {
    expect(summarizeFloor(scenario([{ kind: "ours", round: 1, metrics: { x: 1 } }]))).toEqual([]);
  });

  it("joins each metric's row against Go with its row against the floor, and adds none where the floor did not run", () => {
    const runs: ScenarioResult["runs"] = [
      { kind: "ours", round: 1, metrics: { x: 90 } },
      { kind: "go", round: 1, metrics: { x: 60 } },
    ];
    const againstGo = { unit: "MiB", better: "lower", ours: 90, go: 60, ratio: 1.5, pairs: 1 } as const;
    expect(summarizeWithFloor(scenario([...runs, { kind: "floor", round: 1, metrics: { x: 45 } }]))).toEqual([
      { metric: "x", ...againstGo, againstFloor: { metric: "x", floor: 45, oursOverFloor: 2 } },
      { metric: "loadOnly", unit: "MiB", better: "lower", ours: Number.NaN, go: Number.NaN, ratio: Number.NaN, pairs: 0, againstFloor: { metric: "loadOnly", floor: Number.NaN, oursOverFloor: Number.NaN } },
    ]);
    expect(summarizeWithFloor(scenario(runs))).toEqual([
      { metric: "x", ...againstGo },
      { metric: "loadOnly", unit: "MiB", better: "lower", ours: Number.NaN, go: Number.NaN, ratio: Number.NaN, pairs: 0 },
    ]);
  });
});
