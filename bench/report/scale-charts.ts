/**
 * The scale scenario's report part: each of its figures plotted against N
 * for both attachers (one scenario per N, one round each), and the memory
 * slope per 1,000 own VAs between the smallest and the largest N.
 */
import type { AttacherKind } from "../lib/attacher-under-test";
import type { BenchResults, ScenarioResult } from "../lib/results";
import { median } from "../lib/stats";
import { escapeXml, lineChart } from "../../test/ground/svg-line-chart";

const colors: Record<Exclude<AttacherKind, "floor">, string> = { ours: "#1f6fd1", go: "#e07b00" };

/** scaleScenarios are the scale runs, smallest N first. */
export function scaleScenarios(results: BenchResults): ScenarioResult[] {
  return results.scenarios.filter((s) => s.id.startsWith("scale-n") && typeof s.params.n === "number").sort((a, b) => Number(a.params.n) - Number(b.params.n));
}

/** scalePoints are [N, median value] of one metric for one attacher. */
export function scalePoints(scenarios: readonly ScenarioResult[], metric: string, kind: AttacherKind): [number, number][] {
  return scenarios.flatMap((s) => {
    const values = s.runs.filter((r) => r.kind === kind).map((r) => r.metrics[metric]).filter((v): v is number => v !== undefined && Number.isFinite(v));
    return values.length === 0 ? [] : [[Number(s.params.n), median(values)] as [number, number]];
  });
}

/** memorySlope is (settled RSS at the largest N - at the smallest) per 1,000 VAs, in MiB; NaN with fewer than two N. */
export function memorySlope(scenarios: readonly ScenarioResult[], kind: AttacherKind, metric = "rssSettledMiB"): number {
  const points = scalePoints(scenarios, metric, kind);
  const first = points[0];
  const last = points[points.length - 1];
  if (first === undefined || last === undefined || last[0] === first[0]) return Number.NaN;
  return ((last[1] - first[1]) * 1000) / (last[0] - first[0]);
}

/** scaleChartsHtml plots every metric of the scale scenario against N; empty when there is no scale run. */
export function scaleChartsHtml(results: BenchResults): string {
  const scenarios = scaleScenarios(results);
  const first = scenarios[0];
  if (first === undefined) return "";
  const charts = first.metrics.map((spec) => {
    const lines = (["ours", "go"] as const).map((kind) => ({ label: kind === "ours" ? "ours" : "Go", color: colors[kind], points: scalePoints(scenarios, spec.name, kind) }));
    return lineChart(lines, { title: `${spec.name} (${spec.unit}) against N`, xLabel: "own VAs (N)", yLabel: spec.unit });
  });
  const slope = (kind: AttacherKind, metric: string) => memorySlope(scenarios, kind, metric).toFixed(3);
  return `<section><h2>Scale: cost against N</h2>
<p>One run per attacher and N (ours, then Go, on the same objects). Hover a chart line for its attacher. Memory per 1,000 own VAs between N=${escapeXml(String(first.params.n))} and N=${escapeXml(String(scenarios[scenarios.length - 1]?.params.n ?? ""))}: VmRSS ours ${slope("ours", "rssSettledMiB")} MiB, Go ${slope("go", "rssSettledMiB")} MiB; RssAnon ours ${slope("ours", "anonSettledMiB")} MiB, Go ${slope("go", "anonSettledMiB")} MiB.</p>
<div class="charts">${charts.join("\n")}</div></section>`;
}
