/**
 * The Grafana dashboard of deploy/monitoring/dashboard.json, built here so
 * that every panel's queries, layout and ids come from one list; run
 * `bun run scripts/grafana-dashboard.ts` after a change
 * (test/unit/monitoring/dashboard.test.ts fails until the file matches).
 *
 * Every query works for the Go sidecar where the metric exists there; each
 * panel whose metric is ours alone says so in its description, and
 * {@link DashboardTarget.source} names where a target's series come from.
 */
import { join } from "node:path";

/** Where the dashboard is written. */
export const dashboardPath = join(import.meta.dir, "dashboard.json");

/** Who exports a target's series: both sidecars, ours only, or an exporter beside them. */
export type SeriesSource = "both" | "ours" | "cadvisor" | "kube-state-metrics";

/** One query of a panel. */
export interface DashboardTarget {
  readonly refId: string;
  readonly expr: string;
  readonly legendFormat: string;
  readonly source: SeriesSource;
}

interface PanelSpec {
  readonly title: string;
  readonly description: string;
  readonly unit: string;
  readonly targets: readonly DashboardTarget[];
}

/** The Prometheus data source every query and variable uses: the dashboard's `datasource` variable. */
const datasource = { type: "prometheus", uid: "${datasource}" } as const;

/**
 * A scrape target is an attacher when it exports the VA queue's depth (every
 * replica does, standbys too, ours and the Go sidecar alike): `process_*`
 * and `rest_client_*` are joined to it so that the provisioner's and the
 * driver's processes in the same pod stay out.
 */
const attacherTargets = 'and on (job, instance) workqueue_depth{name="csi-attacher-va"}';
/** The attacher's own CSI calls: other sidecars in the pod report the same family for theirs. */
const attachDetach = 'method_name=~"/csi.v1.Controller/Controller(Publish|Unpublish)Volume"';
const operations = `driver_name=~"$driver", pod=~"$pod"`;
const queues = 'name=~"csi-attacher-va|csi-attacher-pv", pod=~"$pod"';

function target(refId: string, expr: string, legendFormat: string, source: SeriesSource = "both"): DashboardTarget {
  return { refId, expr, legendFormat, source };
}

function quantile(refId: string, q: number): DashboardTarget {
  return target(
    refId,
    `histogram_quantile(${q}, sum by (le, method_name) (rate(csi_sidecar_operations_seconds_bucket{${operations}, ${attachDetach}}[$__rate_interval])))`,
    `p${q * 100} {{method_name}}`,
  );
}

/** The rows of the dashboard, each with its panels in reading order. */
export const dashboardRows: readonly { readonly title: string; readonly panels: readonly PanelSpec[] }[] = [
  {
    title: "Attach and detach",
    panels: [
      {
        title: "Attach and detach rate",
        description: "ControllerPublishVolume (attach) and ControllerUnpublishVolume (detach) calls a second, by outcome.",
        unit: "ops",
        targets: [
          target("A", `sum by (method_name, grpc_status_code) (rate(csi_sidecar_operations_seconds_count{${operations}, ${attachDetach}}[$__rate_interval]))`, "{{method_name}} {{grpc_status_code}}"),
        ],
      },
      {
        title: "Attach and detach latency",
        description: "p50, p90 and p99 of the driver's ControllerPublishVolume and ControllerUnpublishVolume, from the histogram's buckets (0.1 s to 600 s).",
        unit: "s",
        targets: [quantile("A", 0.5), quantile("B", 0.9), quantile("C", 0.99)],
      },
      {
        title: "Errors by gRPC code and method",
        description: "Failed calls a second: DeadlineExceeded is a slow driver, Unavailable a driver restarting, the other codes the driver refusing the volume. ListVolumes is the reconciler's.",
        unit: "ops",
        targets: [
          target(
            "A",
            `sum by (method_name, grpc_status_code) (rate(csi_sidecar_operations_seconds_count{${operations}, grpc_status_code!="OK", method_name=~"/csi.v1.Controller/(ControllerPublishVolume|ControllerUnpublishVolume|ListVolumes)"}[$__rate_interval]))`,
            "{{method_name}} {{grpc_status_code}}",
          ),
        ],
      },
      {
        title: "Migrated vs not",
        description: "Calls for in-tree volumes translated to CSI (migrated=\"true\") and for CSI volumes. Only drivers that in-tree volumes migrate to (EBS, GCE PD, Azure Disk, Cinder, vSphere, Portworx) carry the label, in both sidecars.",
        unit: "ops",
        targets: [target("A", `sum by (migrated, method_name) (rate(csi_sidecar_operations_seconds_count{${operations}, ${attachDetach}, migrated!=""}[$__rate_interval]))`, "migrated={{migrated}} {{method_name}}")],
      },
    ],
  },
  {
    title: "Queues",
    panels: [
      {
        title: "Queue depth",
        description: "Items waiting in each work queue (VolumeAttachments, PersistentVolumes), per replica; a standby shows 0.",
        unit: "short",
        targets: [target("A", `workqueue_depth{${queues}}`, "{{pod}} {{name}}")],
      },
      {
        title: "Oldest waiting item",
        description: "How long the item that has waited longest for a worker has been waiting, per queue. bun-csi-attacher only: the Go sidecar has no such metric.",
        unit: "s",
        targets: [target("A", `csi_attacher_workqueue_oldest_waiting_seconds{${queues}}`, "{{pod}} {{name}}", "ours")],
      },
      {
        title: "Longest running operation",
        description: "How long the longest sync a worker is still busy with has been running, per queue: near --timeout, the driver's calls hang.",
        unit: "s",
        targets: [target("A", `workqueue_longest_running_processor_seconds{${queues}}`, "{{pod}} {{name}}")],
      },
      {
        title: "Retries",
        description: "Items re-queued with back-off a second (failed attaches and detaches), per queue.",
        unit: "ops",
        targets: [target("A", `sum by (pod, name) (rate(workqueue_retries_total{${queues}}[$__rate_interval]))`, "{{pod}} {{name}}")],
      },
      {
        title: "Leader per replica",
        description: "1 on the replica holding the Lease, 0 on standbys. The Go sidecar reports name=\"\"; ours names the Lease.",
        unit: "short",
        targets: [target("A", `leader_election_master_status{pod=~"$pod"} ${attacherTargets}`, "{{pod}} {{name}}")],
      },
    ],
  },
  {
    title: "Resources",
    panels: [
      {
        title: "Memory",
        description:
          "Resident memory (both sidecars); anonymous memory, the JavaScript heap and the cgroup limit found at start-up (bun-csi-attacher only); the container's working set and limit where cAdvisor and kube-state-metrics are scraped (a container named csi-attacher).",
        unit: "bytes",
        targets: [
          target("A", `process_resident_memory_bytes{pod=~"$pod"} ${attacherTargets}`, "{{pod}} resident"),
          target("B", `csi_attacher_resident_anonymous_memory_bytes{pod=~"$pod"}`, "{{pod}} anonymous", "ours"),
          target("C", `csi_attacher_javascript_heap_used_bytes{pod=~"$pod"}`, "{{pod}} JavaScript heap", "ours"),
          target("D", `csi_attacher_memory_limit_bytes{pod=~"$pod"}`, "{{pod}} limit", "ours"),
          target("E", `container_memory_working_set_bytes{container="csi-attacher", pod=~"$pod"}`, "{{pod}} working set (cAdvisor)", "cadvisor"),
          target("F", `kube_pod_container_resource_limits{container="csi-attacher", resource="memory", pod=~"$pod"}`, "{{pod}} limit (kube-state-metrics)", "kube-state-metrics"),
        ],
      },
      {
        title: "CPU",
        description: "CPU seconds a second the attacher process uses.",
        unit: "percentunit",
        targets: [target("A", `rate(process_cpu_seconds_total{pod=~"$pod"}[$__rate_interval]) ${attacherTargets}`, "{{pod}}")],
      },
      {
        title: "API requests",
        description: "Requests to kube-apiserver a second, by method and status code (client-go's rest_client_requests_total; ours counts the work client, not leader election's). bun-csi-attacher only: the Go sidecar v4.13 does not link client-go's request metrics.",
        unit: "reqps",
        targets: [target("A", `sum by (pod, method, code) (rate(rest_client_requests_total{pod=~"$pod"}[$__rate_interval]) ${attacherTargets})`, "{{pod}} {{method}} {{code}}", "ours")],
      },
      {
        title: "Client-side throttling",
        description: "Seconds a second requests spent waiting for the --kube-api-qps/--kube-api-burst token bucket, and the p99 of one wait: when they grow, the attacher is held back by its own limit, not by the API server. bun-csi-attacher only, as API requests.",
        unit: "s",
        targets: [
          target("A", `sum by (pod) (rate(rest_client_rate_limiter_duration_seconds_sum{pod=~"$pod"}[$__rate_interval]) ${attacherTargets})`, "{{pod}} waited per second", "ours"),
          target("B", `histogram_quantile(0.99, sum by (le, pod) (rate(rest_client_rate_limiter_duration_seconds_bucket{pod=~"$pod"}[$__rate_interval]) ${attacherTargets}))`, "{{pod}} p99 wait", "ours"),
        ],
      },
    ],
  },
];

/** Every attacher, ours and Go, names its driver on GetPluginCapabilities, standbys included. */
const driverQuery = 'label_values(csi_sidecar_operations_seconds_count{method_name="/csi.v1.Identity/GetPluginCapabilities"}, driver_name)';
const podQuery = 'label_values(csi_sidecar_operations_seconds_count{method_name="/csi.v1.Identity/GetPluginCapabilities", driver_name=~"$driver"}, pod)';

/** A variable filled from a label_values query, every value or several selectable ("All" matches any). */
function queryVariable(name: string, label: string, query: string): Record<string, unknown> {
  return {
    name,
    label,
    type: "query",
    datasource,
    definition: query,
    query: { qryType: 1, query, refId: "PrometheusVariableQueryEditor-VariableQuery" },
    refresh: 2,
    includeAll: true,
    multi: true,
    allValue: ".*",
    current: {},
    options: [],
    sort: 1,
    hide: 0,
    regex: "",
  };
}

/** dashboard builds the dashboard's JSON model (Grafana 11's schema). */
export function dashboard(): Record<string, unknown> {
  const panels: Record<string, unknown>[] = [];
  let id = 1;
  let y = 0;
  for (const row of dashboardRows) {
    panels.push({ id: id++, type: "row", title: row.title, collapsed: false, gridPos: { h: 1, w: 24, x: 0, y }, panels: [] });
    y += 1;
    row.panels.forEach((panel, index) => {
      // Two panels a line, eight units high.
      panels.push({
        id: id++,
        type: "timeseries",
        title: panel.title,
        description: panel.description,
        datasource,
        gridPos: { h: 8, w: 12, x: (index % 2) * 12, y: y + Math.floor(index / 2) * 8 },
        fieldConfig: { defaults: { unit: panel.unit, custom: { lineWidth: 1, fillOpacity: 10, showPoints: "never" } }, overrides: [] },
        options: { legend: { displayMode: "list", placement: "bottom", showLegend: true }, tooltip: { mode: "multi", sort: "desc" } },
        targets: panel.targets.map(({ refId, expr, legendFormat }) => ({ refId, datasource, expr, legendFormat, range: true })),
      });
    });
    y += Math.ceil(row.panels.length / 2) * 8;
  }
  return {
    title: "CSI attacher",
    uid: "csi-attacher",
    description: "bun-csi-attacher and the Go external-attacher: attach and detach, queues, leader election, resources. deploy/monitoring/dashboard.json of bun-csi-attacher.",
    tags: ["csi", "storage", "csi-attacher"],
    editable: true,
    graphTooltip: 1,
    schemaVersion: 39,
    version: 1,
    refresh: "30s",
    time: { from: "now-1h", to: "now" },
    timezone: "",
    annotations: { list: [] },
    links: [],
    templating: {
      list: [
        { name: "datasource", label: "Data source", type: "datasource", query: "prometheus", current: {}, hide: 0, refresh: 1, regex: "", options: [] },
        queryVariable("driver", "Driver", driverQuery),
        queryVariable("pod", "Pod", podQuery),
      ],
    },
    panels,
  };
}

/** dashboardJson is the file's text: two-space indented, with a final newline. */
export function dashboardJson(): string {
  return `${JSON.stringify(dashboard(), null, 2)}\n`;
}
