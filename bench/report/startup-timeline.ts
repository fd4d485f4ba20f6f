/**
 * The report's start-up timeline: for the cold-start scenario, ms from exec
 * to each step of start-up, ours and Go (medians over rounds) and ours/Go
 * (the median of per-round pairs), as a table and, in HTML, as bars.
 */
import { finiteValues, pairRatios, type RoundMetrics } from "../lib/ratios";
import type { BenchResults } from "../lib/results";
import { startupMarks, type StartupMark } from "../lib/startup-timeline";
import { median } from "../lib/stats";
import { escapeXml } from "../../test/ground/svg-line-chart";

/** TimelineRow is one mark: its medians, the median pair ratio, and which line each attacher's figure is read from. */
export interface TimelineRow {
  readonly label: string;
  readonly ours: number;
  readonly go: number;
  readonly ratio: number;
  readonly oursLine: string;
  readonly goLine: string;
}

const watchLine = "the bench's watch: status.attached";

function lineOf(mark: StartupMark, kind: "ours" | "go"): string {
  return "watchMetric" in mark.from ? watchLine : mark.from[kind].line;
}

/** timelineRows are the cold-start scenario's timeline, one row per mark; empty when the run has no timeline. */
export function timelineRows(results: BenchResults): TimelineRow[] {
  const scenario = results.scenarios.find((s) => s.id === "cold-start");
  const timed = (kind: "ours" | "go"): RoundMetrics[] =>
    (scenario?.runs ?? []).flatMap((run) => (run.kind === kind && run.startupTimeline !== undefined ? [{ round: run.round, metrics: run.startupTimeline }] : []));
  const ours = timed("ours");
  const go = timed("go");
  if (ours.length === 0 && go.length === 0) return [];
  return startupMarks.map((mark) => ({
    label: mark.label,
    ours: median(finiteValues(ours, mark.id)),
    go: median(finiteValues(go, mark.id)),
    ratio: median(pairRatios(ours, go, mark.id)),
    oursLine: lineOf(mark, "ours"),
    goLine: lineOf(mark, "go"),
  }));
}

/** What the timeline's table heads say about where its numbers come from. */
export const timelineCaption =
  "Start-up timeline of the cold-start scenario: ms from exec (the bench's spawn) to each step, read from the klog header of a line each attacher writes at -v=2 anyway (the two last from the bench's watch); medians over rounds, ours/Go the median of per-round pairs. Ours' time includes its one re-exec with its runtime options.";

/** timelineMarkdown is the timeline's table, or nothing when the run has no timeline. */
export function timelineMarkdown(results: BenchResults, format: (x: number) => string): string[] {
  const rows = timelineRows(results);
  if (rows.length === 0) return [];
  return [
    "",
    timelineCaption,
    "",
    "| step | ours (ms) | Go (ms) | ours/Go | ours' line | Go's line |",
    "|---|---:|---:|---:|---|---|",
    ...rows.map((row) => `| ${row.label} | ${format(row.ours)} | ${format(row.go)} | ${format(row.ratio)} | ${row.oursLine} | ${row.goLine} |`),
  ];
}

const barColors = { ours: "#1f6fd1", go: "#e07b00" } as const;

/**
 * timelineBars draws each mark as two bars from exec, ours over Go, on one
 * ms axis. The axis ends at the latest step before the last (all attached,
 * which takes most of the time with work waiting): a bar past it is cut at
 * the edge and says so with "»", so that the start-up's steps stay readable.
 */
function timelineBars(rows: readonly TimelineRow[]): string {
  const labelWidth = 340;
  const plotWidth = 460;
  const rowHeight = 26;
  const top = 24;
  const height = top + rows.length * rowHeight + 24;
  const axisMs = Math.max(1, ...rows.slice(0, -1).flatMap((row) => [row.ours, row.go].filter(Number.isFinite)));
  const x = (ms: number) => (Number.isFinite(ms) ? (Math.min(ms, axisMs) / axisMs) * plotWidth : 0);
  const bars = rows.map((row, i) => {
    const y = top + i * rowHeight;
    const bar = (ms: number, dy: number, color: string) =>
      `<rect x="${labelWidth}" y="${y + dy}" width="${x(ms).toFixed(1)}" height="10" fill="${color}"/><text x="${(labelWidth + x(ms) + 4).toFixed(1)}" y="${y + dy + 9}" font-size="10">${Number.isFinite(ms) ? `${ms > axisMs ? "» " : ""}${Math.round(ms)}` : "–"}</text>`;
    return `<text x="${labelWidth - 6}" y="${y + 14}" font-size="11" text-anchor="end">${escapeXml(row.label)}</text>${bar(row.ours, 2, barColors.ours)}${bar(row.go, 13, barColors.go)}`;
  });
  const legend = `<rect x="${labelWidth}" y="6" width="10" height="10" fill="${barColors.ours}"/><text x="${labelWidth + 14}" y="15" font-size="11">ours</text><rect x="${labelWidth + 60}" y="6" width="10" height="10" fill="${barColors.go}"/><text x="${labelWidth + 74}" y="15" font-size="11">Go</text><text x="${labelWidth + plotWidth}" y="${height - 6}" font-size="10" text-anchor="end">ms from exec (axis to ${Math.round(axisMs)}; » past it)</text>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${labelWidth + plotWidth + 70}" height="${height}" role="img"><title>Start-up timeline, ms from exec</title>${legend}${bars.join("")}</svg>`;
}

/** timelineHtml is the timeline's section: the table and its bars; empty when the run has no timeline. */
export function timelineHtml(results: BenchResults, format: (x: number) => string): string {
  const rows = timelineRows(results);
  if (rows.length === 0) return "";
  const cells = rows
    .map((row) => `<tr><td>${escapeXml(row.label)}</td><td>${format(row.ours)}</td><td>${format(row.go)}</td><td>${format(row.ratio)}</td><td>${escapeXml(row.oursLine)}</td><td>${escapeXml(row.goLine)}</td></tr>`)
    .join("");
  return `<section><h2>Start-up timeline</h2><p>${escapeXml(timelineCaption)}</p>
<table><tr><th>step</th><th>ours (ms)</th><th>Go (ms)</th><th>ours/Go</th><th>ours' line</th><th>Go's line</th></tr>${cells}</table>
<div class="charts">${timelineBars(rows)}</div></section>`;
}
