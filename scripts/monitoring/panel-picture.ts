/**
 * A dashboard panel drawn as SVG without Grafana: the series its queries
 * returned from Prometheus, on the bench report's line chart. The monitoring
 * end-to-end test draws the main panels over its run, so the README can show
 * what the dashboard looks like.
 */
import { lineChart, type ChartLine } from "../../bench/report/svg-line-chart";

/** The samples one query returned for one series, as Prometheus' range API gives them. */
export interface QueriedSeries {
  readonly metric: Readonly<Record<string, string>>;
  readonly values: readonly (readonly [number, string])[];
}

/** One query of the panel with what it returned. */
export interface QueriedTarget {
  /** Grafana's legend template: `{{label}}` takes the series' label. */
  readonly legendFormat: string;
  readonly series: readonly QueriedSeries[];
}

const palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"];

/** How each panel unit is drawn: its axis label and the factor from the query's unit. */
const units: Readonly<Record<string, { label: string; factor: number }>> = {
  ops: { label: "calls/s", factor: 1 },
  reqps: { label: "requests/s", factor: 1 },
  s: { label: "s", factor: 1 },
  short: { label: "", factor: 1 },
  bytes: { label: "MiB", factor: 1 / (1024 * 1024) },
  percentunit: { label: "CPU cores", factor: 1 },
};

/**
 * panelPicture draws `targets` over time, seconds since `startSeconds` on
 * the x axis. Legends drop the `/csi.v1.Controller/Controller` prefix that
 * every method name in these panels shares.
 */
export function panelPicture(title: string, unit: string, targets: readonly QueriedTarget[], startSeconds: number): string {
  const { label, factor } = units[unit] ?? { label: unit, factor: 1 };
  const lines: ChartLine[] = targets
    .flatMap((target) => target.series.map((series) => ({ target, series })))
    .map(({ target, series }, index) => ({
      label: target.legendFormat.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, name: string) => series.metric[name] ?? "").replace("/csi.v1.Controller/Controller", ""),
      color: palette[index % palette.length] ?? "#000",
      points: series.values.map(([at, value]) => [at - startSeconds, Number(value) * factor] as const).filter(([, value]) => Number.isFinite(value)),
    }));
  return lineChart(lines, { title, xLabel: "s since the run started", yLabel: label, width: 760, height: 300 });
}
