/**
 * The self-contained HTML report: machine facts, the ratio table, and per
 * scenario inline-SVG curves (VAs attached over time, RSS over time, latency
 * CDF). No script, no external file: it can be mailed or committed as is.
 */
import { summarize } from "../lib/ratios";
import type { BenchResults, RunResult, ScenarioResult } from "../lib/results";
import { floorRows, formatNumber, limitRows, machineLines, verdict } from "./render-markdown";
import { scaleChartsHtml } from "./scale-charts";
import { timelineHtml } from "./startup-timeline";
import { escapeXml, lineChart, type ChartLine } from "../../test/ground/svg-line-chart";

const colors = { ours: "#1f6fd1", go: "#e07b00", floor: "#2a9d4a" } as const;
const kindLabels = { ours: "ours", go: "Go", floor: "floor" } as const;

function lines(runs: readonly RunResult[], pick: (r: RunResult) => readonly (readonly [number, number])[] | undefined): ChartLine[] {
  return runs.flatMap((run) => {
    const points = pick(run);
    return points === undefined ? [] : [{ label: `${kindLabels[run.kind]} r${run.round}`, color: colors[run.kind], points, dashed: run.round % 2 === 0 }];
  });
}

function cdf(latencies: readonly number[]): [number, number][] {
  return latencies.map((ms, i) => [ms, (i + 1) / latencies.length]);
}

function scenarioSection(scenario: ScenarioResult): string {
  const charts: string[] = [];
  const attached = lines(scenario.runs, (r) => r.attachedCurve);
  if (attached.length > 0) charts.push(lineChart(attached, { title: "VAs attached over time", xLabel: scenario.id === "cold-start" ? "s since exec" : "s since the first create", yLabel: "attached" }));
  const rss = lines(scenario.runs, (r) => r.rssCurve);
  if (rss.length > 0) charts.push(lineChart(rss, { title: "RSS over time", xLabel: "s since exec", yLabel: "MiB" }));
  const latency = lines(scenario.runs, (r) => (r.latenciesMs === undefined ? undefined : cdf(r.latenciesMs)));
  if (latency.length > 0) charts.push(lineChart(latency, { title: "Latency CDF, create to attached", xLabel: "ms", yLabel: "fraction" }));
  const params = Object.entries(scenario.params).map(([k, v]) => `${k}=${v}`).join(", ");
  const rows = scenario.runs
    .map((r) => `<tr><td>${r.kind}</td><td>${r.round}</td>${scenario.metrics.map((m) => `<td>${formatNumber(r.metrics[m.name] ?? Number.NaN)}</td>`).join("")}</tr>`)
    .join("");
  const limitRuns = (scenario.limitRuns ?? [])
    .map((r) => `<tr><td>bare-client limit</td><td>${r.round}</td>${scenario.metrics.map((m) => `<td>${formatNumber(r.metrics[m.name] ?? Number.NaN)}</td>`).join("")}</tr>`)
    .join("");
  const notes = scenario.notes.map((n) => `<li>${escapeXml(n)}</li>`).join("");
  return `<section><h2>${escapeXml(scenario.title)}</h2><p class="params">${escapeXml(params)}</p>
${notes === "" ? "" : `<ul class="notes">${notes}</ul>`}
<table><tr><th>kind</th><th>round</th>${scenario.metrics.map((m) => `<th title="${escapeXml(m.description)}">${escapeXml(m.name)} (${escapeXml(m.unit)})</th>`).join("")}</tr>${rows}${limitRuns}</table>
<div class="charts">${charts.join("\n")}</div></section>`;
}

/** dashboardSection shows the dashboard's main panels over the throughput scenario, when the run drew them. */
function dashboardSection(results: BenchResults): string {
  const monitoring = results.monitoring;
  if (monitoring === undefined) return "";
  const empty = monitoring.empty.length === 0 ? "" : ` No data over this run: ${escapeXml(monitoring.empty.join(", "))}.`;
  return `<section><h2>The dashboard over the ${escapeXml(monitoring.scenario)} scenario</h2>
<p>The main panels of deploy/monitoring/dashboard.json, drawn from the same queries without Grafana. ${escapeXml(monitoring.description)}${empty}</p>
<div class="charts">${monitoring.panels.map((panel) => panel.svg).join("\n")}</div></section>`;
}

export function renderHtml(results: BenchResults): string {
  const facts = machineLines(results).map(([k, v]) => `<tr><th>${escapeXml(k)}</th><td>${escapeXml(v)}</td></tr>`).join("");
  const ratioRows = results.scenarios
    .flatMap((s) =>
      summarize(s).map((row) => {
        const v = verdict(row.ratio, row.better);
        const cls = v === "ours better" ? "win" : v === "Go better" ? "loss" : "";
        return `<tr><td>${escapeXml(s.title)}</td><td title="${escapeXml(s.metrics.find((m) => m.name === row.metric)?.description ?? "")}">${escapeXml(row.metric)} (${escapeXml(row.unit)}, ${row.better} is better)</td><td>${formatNumber(row.ours)}</td><td>${formatNumber(row.go)}</td><td class="${cls}">${formatNumber(row.ratio)}</td><td class="${cls}">${v}</td></tr>`;
      }),
    )
    .join("");
  const limits = limitRows(results);
  const limitTable =
    limits.length === 0
      ? ""
      : `<h2>Against the bare-client limit</h2>
<p>A bare client making the same API writes per VA as an attacher (PV finalizer, VA finalizer and node-ID annotation, status; on delete the finalizer's removal), with no CSI call, no list, no watch and no cache, at the same worker count: the ceiling either attacher could reach on this machine. Median over rounds of each round's attacher/limit; issue 8's target is ours &gt;= 0.9.</p>
<table><tr><th>scenario</th><th>limit (VA/s)</th><th>ours/limit</th><th>Go/limit</th></tr>${limits.map((row) => `<tr><td>${escapeXml(row.title)}</td><td>${formatNumber(row.limit)}</td><td>${formatNumber(row.oursOverLimit)}</td><td>${formatNumber(row.goOverLimit)}</td></tr>`).join("")}</table>`;
  const floors = floorRows(results);
  const floorTable =
    floors.length === 0
      ? ""
      : `<h2>Ours, Go and Bun's floor</h2>
<p>The floor is a bare compiled Bun client (bench/floor/bare-attacher.ts) making the same API writes and CSI calls per VA with no cache and no queue; load-only (floor a) loads only fetch over TLS and node:http2 and idles. What ours costs above the floor is our code's; what the floor costs above Go is the runtime's. Ratios are medians of per-round pairs.</p>
<table><tr><th>scenario</th><th>metric</th><th>ours</th><th>Go</th><th>floor</th><th>ours/Go</th><th>ours/floor</th></tr>${floors.map((row) => `<tr><td>${escapeXml(row.title)}</td><td>${escapeXml(row.metric)} (${escapeXml(row.unit)})</td><td>${formatNumber(row.ours)}</td><td>${formatNumber(row.go)}</td><td>${formatNumber(row.floor)}</td><td>${formatNumber(row.ratio)}</td><td>${formatNumber(row.oursOverFloor)}</td></tr>`).join("")}</table>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>bun-csi-attacher vs Go csi-attacher, ${escapeXml(results.machine.date)}</title>
<style>
body{font-family:sans-serif;margin:2em;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}
.facts td{text-align:left}.win{background:#e3f4e3}.loss{background:#fbe4e4}
.charts svg{margin:4px;border:1px solid #eee}.params{color:#555}.notes{color:#a33}
</style></head><body>
<h1>bun-csi-attacher vs Go csi-attacher v4.13.0</h1>
<table class="facts">${facts}</table>
<h2>Ratios, ours/Go</h2>
<p>Median over rounds of ours/Go; each round ran ours, then Go, on the same kube-apiserver, etcd and driver with the same flags. Hover a metric for its definition.</p>
<table><tr><th>scenario</th><th>metric</th><th>ours (median)</th><th>Go (median)</th><th>ours/Go</th><th></th></tr>${ratioRows}</table>
${timelineHtml(results, formatNumber)}
${limitTable}
${floorTable}
${scaleChartsHtml(results)}
${results.scenarios.map(scenarioSection).join("\n")}
${dashboardSection(results)}
</body></html>
`;
}
