/**
 * Ours against Bun's floor (the bare floor client, kind "floor"): round r
 * of ours over round r of the floor, which ran in the same round, then the
 * median of those pair ratios, as bench/lib/ratios.ts pairs ours with Go.
 */
import type { ScenarioResult } from "./results.ts";
import { median } from "./stats.ts";

/** FloorSummary is one metric's floor median and ours/floor. */
export interface FloorSummary {
  readonly metric: string;
  readonly floor: number;
  /** Median over rounds of ours/floor. */
  readonly oursOverFloor: number;
}

/** summarizeFloor returns one row per metric, or nothing when the floor did not run in this scenario. */
export function summarizeFloor(scenario: ScenarioResult): FloorSummary[] {
  const floorRuns = scenario.runs.filter((r) => r.kind === "floor");
  if (floorRuns.length === 0) return [];
  const finite = (v: number | undefined): v is number => v !== undefined && Number.isFinite(v);
  return scenario.metrics.map((spec) => {
    const ratios = floorRuns.flatMap((floorRun) => {
      const ours = scenario.runs.find((r) => r.kind === "ours" && r.round === floorRun.round)?.metrics[spec.name];
      const floor = floorRun.metrics[spec.name];
      return finite(ours) && finite(floor) && floor !== 0 ? [ours / floor] : [];
    });
    return { metric: spec.name, floor: median(floorRuns.map((r) => r.metrics[spec.name]).filter(finite)), oursOverFloor: median(ratios) };
  });
}
