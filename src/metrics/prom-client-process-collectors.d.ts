/**
 * Types for the process collectors inside prom-client that its index does
 * not export one by one. Each module registers its metrics on the given
 * registry; `collectDefaultMetrics` would also start the `nodejs_*`
 * collectors, which under Bun report zeros or nothing (see process-metrics.ts).
 */
declare module "prom-client/lib/metrics/*.js" {
  import type { Registry } from "prom-client";

  /** Registers one collector's metrics on `registry`. */
  function register(registry: Registry): void;
  export = register;
}
