import type { Registry } from "prom-client";
// From their own modules, not prom-client's index: see prom-client-metric-classes.d.ts.
import Counter from "prom-client/lib/counter.js";
import Gauge from "prom-client/lib/gauge.js";
import Histogram from "prom-client/lib/histogram.js";
import type { MetricDefinition } from "./metric-table";

/** A row of the metric table of one kind, with its label names as literal types. */
type Row<K extends MetricDefinition["kind"], L extends string> = MetricDefinition & { readonly kind: K; readonly labelNames: readonly L[] };

/** counterFrom builds and registers the counter a table row describes. */
export function counterFrom<L extends string>(row: Row<"counter", L>, registry: Registry): Counter<L> {
  return new Counter({ name: row.name, help: row.help, labelNames: row.labelNames, registers: [registry] });
}

/**
 * gaugeFrom builds and registers the gauge a table row describes; `collect`,
 * when given, sets its values at scrape time (for values read from state
 * rather than counted from events).
 */
export function gaugeFrom<L extends string>(row: Row<"gauge", L>, registry: Registry, collect?: (gauge: Gauge<L>) => void): Gauge<L> {
  return new Gauge({
    name: row.name,
    help: row.help,
    labelNames: row.labelNames,
    registers: [registry],
    ...(collect === undefined ? {} : { collect: function (this: Gauge<L>) { collect(this); } }),
  });
}

/**
 * histogramFrom builds and registers the histogram a table row describes,
 * with `labelNames` in place of the row's when a caller leaves some out.
 */
export function histogramFrom<L extends string>(row: Row<"histogram", L>, registry: Registry, labelNames: readonly L[] = row.labelNames): Histogram<L> {
  return new Histogram({ name: row.name, help: row.help, labelNames, buckets: [...(row.buckets ?? [])], registers: [registry] });
}
