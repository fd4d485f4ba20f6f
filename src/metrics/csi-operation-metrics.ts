import type { Histogram, Registry } from "prom-client";
import type { CsiOperation, CsiOperationObserver } from "./csi-operation-observer";
import { histogramFrom } from "./metric-builders";
import { metricTable } from "./metric-table";

type OperationLabel = (typeof metricTable.csiOperations.labelNames)[number];

/** What csi-lib-utils records as driver_name before the driver has told its name. */
const unknownDriverName = "unknown-driver";

/**
 * CsiOperationMetrics is `csi_sidecar_operations_seconds`: one histogram
 * sample per CSI call, labelled with the driver, the full method and the
 * gRPC code name, plus `migrated` when the driver is one that in-tree
 * volumes migrate to.
 *
 * Calls made before {@link setDriver} (Probe, GetPluginInfo) are recorded
 * with `driver_name="unknown-driver"`, as upstream's metrics manager does
 * before SetDriverName.
 */
export class CsiOperationMetrics implements CsiOperationObserver {
  private readonly registry: Registry;
  private driverName = unknownDriverName;
  private migratable = false;
  private histogram: Histogram<OperationLabel>;

  constructor(registry: Registry) {
    this.registry = registry;
    this.histogram = this.createHistogram();
  }

  /**
   * Names the driver for every later sample. For a migratable driver the
   * histogram is rebuilt with the `migrated` label, dropping the samples so
   * far: upstream does the same, building a new metrics manager with
   * WithMigration once it knows the driver, so its families never mix
   * label sets.
   */
  setDriver(name: string, migratable: boolean): void {
    this.driverName = name === "" ? unknownDriverName : name;
    if (migratable === this.migratable) return;
    this.migratable = migratable;
    this.registry.removeSingleMetric(metricTable.csiOperations.name);
    this.histogram = this.createHistogram();
  }

  observe(operation: CsiOperation): void {
    const labels = { driver_name: this.driverName, grpc_status_code: operation.code, method_name: operation.method };
    this.histogram.observe(this.migratable ? { ...labels, migrated: String(operation.migrated) } : labels, operation.seconds);
  }

  private createHistogram(): Histogram<OperationLabel> {
    const row = metricTable.csiOperations;
    const labelNames = this.migratable ? row.labelNames : row.labelNames.filter((label) => label !== "migrated");
    return histogramFrom(row, this.registry, labelNames);
  }
}
