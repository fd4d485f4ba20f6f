/**
 * Each attacher's throughput against the bare-client limit (scenario 7):
 * round r of an attacher over round r of the bare client, which ran right
 * after it, then the median of those pair ratios (paired as ratios.ts
 * pairs ours with Go).
 */
import { finiteValues, pairRatios } from "./ratios";
import type { ScenarioResult } from "./results";
import { median } from "./stats";

/** LimitSummary is the limit's median attach rate and each attacher's share of it. */
export interface LimitSummary {
  /** Median VA/s of the bare client. */
  readonly limit: number;
  /** Median over rounds of ours/limit. */
  readonly oursOverLimit: number;
  /** Median over rounds of go/limit. */
  readonly goOverLimit: number;
}

/** summarizeLimit returns undefined when the bare client did not run next to this scenario. */
export function summarizeLimit(scenario: ScenarioResult, metric = "attachPerSecond"): LimitSummary | undefined {
  const limitRuns = scenario.limitRuns ?? [];
  if (limitRuns.length === 0) return undefined;
  const share = (kind: "ours" | "go") => median(pairRatios(scenario.runs.filter((run) => run.kind === kind), limitRuns, metric));
  return { limit: median(finiteValues(limitRuns, metric)), oursOverLimit: share("ours"), goOverLimit: share("go") };
}
