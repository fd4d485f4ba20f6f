/**
 * A dashboard panel drawn as SVG without Grafana: the series its queries
 * returned from Prometheus, on the bench report's line chart. The monitoring
 * end-to-end test draws the main panels over its run of faults, the bench
 * over its throughput scenario, so the README can show what the dashboard
 * looks like.
 */
import { lineChart, type ChartLine } from "./svg-line-chart";

/** The main panels, drawn after the monitoring end-to-end test and after the bench's throughput scenario. */
export const picturedPanels = ["Attach and detach rate", "Attach and detach latency", "Errors by gRPC code and method", "Oldest waiting item", "Queue depth", "Leader per replica", "Memory"];

/** pictureFile is the SVG file name of a panel: its title in kebab case. */
export function pictureFile(title: string): string {
  return `${title.toLowerCase().replace(/[^a-z0-9]+/g, "-")}.svg`;
}

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
    .flatMap(({ target, series }, index) => {
      const label = target.legendFormat.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, name: string) => series.metric[name] ?? "").replace("/csi.v1.Controller/Controller", "");
      const color = palette[index % palette.length] ?? "#000";
      return segments(series.values).map((points) => ({ label, color, points: points.map(([at, value]) => [at - startSeconds, value * factor] as const) }));
    });
  return lineChart(lines, { title, xLabel: "s since the run started", yLabel: label, width: 760, height: 300 });
}

/**
 * segments splits a series where it has no number (a quantile of no calls
 * is NaN; Prometheus leaves out steps where a series was absent), as
 * Grafana leaves a gap there rather than drawing a line across it.
 */
function segments(values: readonly (readonly [number, string])[]): (readonly [number, number])[][] {
  const steps = values.slice(1).map(([at], i) => at - (values[i]?.[0] ?? at));
  const step = Math.min(...steps.filter((gap) => gap > 0));
  const parts: (readonly [number, number])[][] = [];
  let current: (readonly [number, number])[] = [];
  let last: number | undefined;
  for (const [at, text] of values) {
    const value = Number(text);
    if (!Number.isFinite(value) || (last !== undefined && at - last > step * 1.5)) {
      if (current.length > 0) parts.push(current);
      current = [];
    }
    if (Number.isFinite(value)) {
      current.push([at, value]);
      last = at;
    }
  }
  if (current.length > 0) parts.push(current);
  return parts;
}
