/**
 * Ratios ours/Go, pair by pair: round r of ours against round r of Go (they
 * ran back to back, so they shared the machine's mood), then the median of
 * the pair ratios.
 */
import type { ScenarioResult } from "./results.ts";
import { median } from "./stats.ts";

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

/** summarize returns one row per metric of a scenario. */
export function summarize(scenario: ScenarioResult): MetricSummary[] {
  return scenario.metrics.map((spec) => {
    const value = (kind: "ours" | "go", round: number) => scenario.runs.find((r) => r.kind === kind && r.round === round)?.metrics[spec.name];
    const rounds = [...new Set(scenario.runs.map((r) => r.round))];
    const ratios: number[] = [];
    for (const round of rounds) {
      const ours = value("ours", round);
      const go = value("go", round);
      if (ours !== undefined && go !== undefined && Number.isFinite(ours) && Number.isFinite(go) && go !== 0) ratios.push(ours / go);
    }
    const all = (kind: "ours" | "go") =>
      scenario.runs.filter((r) => r.kind === kind).map((r) => r.metrics[spec.name]).filter((v): v is number => v !== undefined && Number.isFinite(v));
    return {
      metric: spec.name,
      unit: spec.unit,
      better: spec.better,
      ours: median(all("ours")),
      go: median(all("go")),
      ratio: median(ratios),
      pairs: ratios.length,
    };
  });
}
