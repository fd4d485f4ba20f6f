/**
 * Types for prom-client's registry and metric classes imported from their
 * own modules instead of its index. The index also loads the push gateway
 * (node:http, node:https, node:zlib), the cluster aggregator, the summary's
 * t-digest and every default collector; the attacher uses none of them, and
 * evaluating them cost every start with --http-endpoint a few milliseconds of
 * CPU and megabytes of resident memory (see metric-registry.ts). Each module
 * exports the class its index re-exports, so the index's types describe it.
 */
declare module "prom-client/lib/registry.js" {
  import { Registry } from "prom-client";

  export = Registry;
}

declare module "prom-client/lib/counter.js" {
  import { Counter } from "prom-client";

  export = Counter;
}

declare module "prom-client/lib/gauge.js" {
  import { Gauge } from "prom-client";

  export = Gauge;
}

declare module "prom-client/lib/histogram.js" {
  import { Histogram } from "prom-client";

  export = Histogram;
}
