/**
 * Ours against Bun's floor (the bare floor client, kind "floor"): round r
 * of ours over round r of the floor, which ran in the same round, then the
 * median of those pair ratios, paired as ratios.ts pairs ours with Go.
 */
import { finiteValues, pairRatios, summarize, type MetricSummary } from "./ratios";
import type { ScenarioResult } from "./results";
import { median } from "./stats";

/** FloorSummary is one metric's floor median and ours/floor. */
export interface FloorSummary {
  readonly metric: string;
  readonly floor: number;
  /** Median over rounds of ours/floor. */
  readonly oursOverFloor: number;
}

/** summarizeFloor returns one row per metric, or nothing when the floor did not run in this scenario. */
export function summarizeFloor(scenario: ScenarioResult): FloorSummary[] {
  const floorRuns = scenario.runs.filter((run) => run.kind === "floor");
  if (floorRuns.length === 0) return [];
  const ours = scenario.runs.filter((run) => run.kind === "ours");
  return scenario.metrics.map((spec) => ({ metric: spec.name, floor: median(finiteValues(floorRuns, spec.name)), oursOverFloor: median(pairRatios(ours, floorRuns, spec.name)) }));
}

/** MetricWithFloor is a metric's row against Go and, where the floor ran, its row against the floor. */
export interface MetricWithFloor extends MetricSummary {
  readonly againstFloor?: FloorSummary;
}

/** summarizeWithFloor is summarize's rows of a scenario, each joined with summarizeFloor's row of the same metric. */
export function summarizeWithFloor(scenario: ScenarioResult): MetricWithFloor[] {
  const floors = summarizeFloor(scenario);
  return summarize(scenario).map((row) => {
    const againstFloor = floors.find((floor) => floor.metric === row.metric);
    return againstFloor === undefined ? row : { ...row, againstFloor };
  });
}
