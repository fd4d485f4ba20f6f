/**
 * Ratios ours/Go, pair by pair: round r of ours against round r of Go (they
 * ran back to back, so they shared the machine's mood), then the median of
 * the pair ratios. The floor (floor-ratios.ts) and the bare-client limit
 * (limit-ratios.ts) are paired with the same pairRatios.
 */
import type { RunResult, ScenarioResult } from "./results";
import { median } from "./stats";

/** MetricSummary is a metric's medians per implementation and the median pair ratio. */
export interface MetricSummary {
  readonly metric: string;
  readonly unit: string;
  readonly better: "lower" | "higher";
  readonly ours: number;
  readonly go: number;
  /** Median over rounds of ours/go. */
  readonly ratio: number;
  readonly pairs: number;
}

/** RoundMetrics is what pairing reads of a run: its round and its numbers (an attacher's RunResult or the bare client's LimitRun). */
export type RoundMetrics = Pick<RunResult, "round" | "metrics">;

/** finiteValues are `metric`'s values over `runs`, leaving out runs that lack it or measured nothing (NaN, Infinity). */
export function finiteValues(runs: readonly RoundMetrics[], metric: string): number[] {
  return runs.map((run) => run.metrics[metric]).filter(isFinite);
}

/**
 * pairRatios divides `metric` of each run of `numerators` by that of the
 * run of `denominators` in the same round; a round one side lacks, or where
 * either value is not finite or the denominator is 0, gives no pair.
 */
export function pairRatios(numerators: readonly RoundMetrics[], denominators: readonly RoundMetrics[], metric: string): number[] {
  return denominators.flatMap((denominator) => {
    const over = numerators.find((run) => run.round === denominator.round)?.metrics[metric];
    const under = denominator.metrics[metric];
    return isFinite(over) && isFinite(under) && under !== 0 ? [over / under] : [];
  });
}

/** summarize returns one row per metric of a scenario. */
export function summarize(scenario: ScenarioResult): MetricSummary[] {
  const ours = scenario.runs.filter((run) => run.kind === "ours");
  const go = scenario.runs.filter((run) => run.kind === "go");
  return scenario.metrics.map((spec) => {
    const ratios = pairRatios(ours, go, spec.name);
    return {
      metric: spec.name,
      unit: spec.unit,
      better: spec.better,
      ours: median(finiteValues(ours, spec.name)),
      go: median(finiteValues(go, spec.name)),
      ratio: median(ratios),
      pairs: ratios.length,
    };
  });
}

function isFinite(value: number | undefined): value is number {
  return value !== undefined && Number.isFinite(value);
}
