/**
 * Each attacher's throughput against the bare-client limit (scenario 7):
 * round r of an attacher over round r of the bare client, which ran right
 * after it, then the median of those pair ratios (as bench/lib/ratios.ts
 * pairs ours with Go).
 */
import type { ScenarioResult } from "./results.ts";
import { median } from "./stats.ts";

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
  const finite = (v: number | undefined): v is number => v !== undefined && Number.isFinite(v);
  const share = (kind: "ours" | "go") =>
    median(
      limitRuns.flatMap((limitRun) => {
        const attacher = scenario.runs.find((r) => r.kind === kind && r.round === limitRun.round)?.metrics[metric];
        const limit = limitRun.metrics[metric];
        return finite(attacher) && finite(limit) && limit !== 0 ? [attacher / limit] : [];
      }),
    );
  return { limit: median(limitRuns.map((r) => r.metrics[metric]).filter(finite)), oursOverLimit: share("ours"), goOverLimit: share("go") };
}
