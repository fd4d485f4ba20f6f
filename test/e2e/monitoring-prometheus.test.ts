import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryGroup, whyUnusable } from "../ground/memory-cgroup";
import { dashboardPath, dashboardRows } from "../../deploy/monitoring/dashboard-panels";
import { panelPicture, pictureFile, picturedPanels, type QueriedTarget } from "../ground/panel-picture";
import { monitoringPaths } from "../../scripts/monitoring/prometheus-rule";
import { AdminClient } from "../ground/admin-client";
import { ensureComponents } from "../ground/components";
import { freeLoopbackPorts } from "../ground/free-ports";
import { waitForCondition } from "../ground/managed-process";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { launchFakeCsiDriver, type FakeCsiDriver } from "../ground/fake-csi-driver/launch";
import { startAttacher, type AttacherProcess } from "../ground/attacher-process";
import { csiNode, paths, persistentVolume, volumeAttachment, type VolumeAttachmentJson } from "../ground/objects";
import { PrometheusServer, type ActiveAlert } from "../ground/prometheus-server";

/**
 * The shipped dashboard and alerts against a real Prometheus (built from its
 * Go module like promtool) scraping two replicas of the compiled attacher
 * through a churn: attaches and detaches, a driver failing publishes, a
 * driver slow enough to back the queue up, and a leader change. Every
 * panel's query, its variables filled in, must return data; the error-rate
 * and stuck-attach alerts must go pending or firing while their fault lasts
 * and resolve after it.
 *
 * The rules Prometheus evaluates are the shipped file with two changes,
 * because its durations are minutes and a test's faults last seconds: every
 * `for:` is 5s, and the error rate's 5-minute windows are 30 s. Thresholds
 * and expressions are the shipped ones.
 */
const driverName = "ebs.csi.aws.com"; // a driver in-tree volumes migrate to: its operations carry `migrated`
const node = "monitoring-node";
const pods = ["attacher-a", "attacher-b"] as const;
/** deploy/kubernetes/deployment.yaml allows 112Mi; a little more for a machine busy with other tests. */
const memoryLimitBytes = 160 * 1024 * 1024;
const rateInterval = "10s";

/** Why this machine cannot run the replicas in memory cgroups: the test then fails saying so, it never skips. */
const missing = whyUnusable();
let cluster: TestCluster;
let admin: AdminClient;
let driver: FakeCsiDriver;
let prometheus: PrometheusServer;
let dir: string;
const groups: MemoryGroup[] = [];
const replicas = new Map<string, AttacherProcess>();
let startedAt: number;

/** The shipped rules with minutes turned into seconds, as the file's comment says. */
function testCopyOfRules(): string {
  return readFileSync(monitoringPaths.rules, "utf8").replace(/for: \d+m/g, "for: 5s").replace(/\[5m\]/g, "[30s]");
}

beforeAll(async () => {
  if (missing !== undefined) throw new Error(`this test needs a writable memory cgroup and must not be skipped: ${missing}`);
  startedAt = Date.now() / 1000;
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  dir = mkdtempSync(join(tmpdir(), "e2e-monitoring-"));
  driver = await launchFakeCsiDriver({ directory: dir, config: { name: driverName } });
  await admin.create(paths.csiNodes, csiNode(node, [{ name: driverName, nodeID: `${node}-id` }]));
  const ports = await freeLoopbackPorts(pods);
  for (const pod of pods) {
    // Each replica in a memory cgroup of its own, as in a container with limits.memory: the limit gauge has a sample.
    const group = MemoryGroup.create(`e2e-monitoring-${pod}-${process.pid}`);
    group.setLimit(memoryLimitBytes);
    groups.push(group);
    replicas.set(
      pod,
      await startAttacher(
        {
          kubeconfig: cluster.kubeconfigPath,
          csiAddress: driver.csiSocket,
          logDir: dir,
          name: pod,
          hostname: pod,
          wrapper: group.wrapper(),
          env: { POD_NAMESPACE: "default" },
          args: [
            `--http-endpoint=127.0.0.1:${ports[pod]}`,
            "--leader-election",
            "--leader-election-lease-duration=6s",
            "--leader-election-renew-deadline=3s",
            "--leader-election-retry-period=1s",
            "--feature-gates=ReleaseLeaderElectionOnExit=true",
            // One worker and a long --timeout: a slow publish holds it and the queue backs up.
            "--worker-threads=1",
            "--timeout=60s",
            "--retry-interval-max=5s",
          ],
        },
        false,
      ),
    );
  }
  const { prometheus: binary } = await ensureComponents();
  prometheus = await PrometheusServer.start({
    binary,
    dir,
    targets: pods.map((pod) => ({ address: `127.0.0.1:${ports[pod]}`, labels: { namespace: "default", pod } })),
    rules: testCopyOfRules(),
  });
  await waitForCondition(async () => (await prometheus.targetsUp()) === pods.length, { description: "both replicas scraped", timeoutMs: 30_000, intervalMs: 500 });
});

afterAll(async () => {
  for (const replica of replicas.values()) await replica.process.stop();
  for (const group of groups) group.remove();
  await prometheus?.[Symbol.asyncDispose]();
  await driver?.[Symbol.asyncDispose]();
  await cluster?.stop();
});

async function createVolumeAttachment(name: string): Promise<void> {
  await admin.create(paths.persistentVolumes, persistentVolume(`pv-${name}`, { driver: driverName, volumeHandle: `vol-${name}` }));
  await admin.create(paths.volumeAttachments, volumeAttachment(name, driverName, node, `pv-${name}`));
}

async function waitAttached(names: readonly string[], timeoutMs: number): Promise<void> {
  for (const name of names) await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment(name), (va) => va?.status?.attached === true, timeoutMs);
}

/** The states `alertname` has been seen in, polled every second until `until` holds for them. */
async function watchAlert(alertname: string, until: (seen: ReadonlySet<ActiveAlert["state"] | "inactive">, now: ActiveAlert["state"] | "inactive") => boolean, timeoutMs: number) {
  const seen = new Set<ActiveAlert["state"] | "inactive">();
  await waitForCondition(
    async () => {
      const alert = (await prometheus.alerts()).find((candidate) => candidate.labels["alertname"] === alertname);
      const now = alert?.state ?? "inactive";
      seen.add(now);
      return until(seen, now);
    },
    { description: `${alertname} states`, timeoutMs, intervalMs: 1_000 },
  );
  return seen;
}

const leaderOf = async () => {
  const series = await prometheus.queryRange('leader_election_master_status == 1', Date.now() / 1000 - 1, Date.now() / 1000, 1);
  return series.map((one) => one.metric["pod"]);
};

describe("the dashboard and alerts against a real Prometheus scraping two replicas", () => {
  it("attaches and detaches a first batch, the leader doing the work and the standby exporting its queues at 0", async () => {
    const first = ["churn-1", "churn-2", "churn-3", "churn-4"];
    for (const name of first) await createVolumeAttachment(name);
    await waitAttached(first, 60_000);
    for (const name of first.slice(0, 2)) await admin.delete(paths.volumeAttachment(name));
    // Detached: the finalizer came off and the API server removed the VA.
    for (const name of first.slice(0, 2)) await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment(name), (va) => va === null, 60_000);
    const depth = await prometheus.queryRange('workqueue_depth{name="csi-attacher-va"}', Date.now() / 1000 - 1, Date.now() / 1000, 1);
    expect(depth.map((series) => series.metric["pod"]).sort()).toEqual([...pods]);
  }, 120_000);

  it("fires CSIAttacherErrorRateHigh while the driver fails publishes, and resolves it once they succeed", async () => {
    const failing = ["failing-1", "failing-2", "failing-3"];
    // One list per method: a later script call would replace it.
    await driver.control.script(
      "ControllerPublishVolume",
      failing.map((name) => ({ code: "Internal" as const, message: "array offline", always: true, volumeId: `vol-${name}` })),
    );
    for (const name of failing) await createVolumeAttachment(name);
    const whileFailing = await watchAlert("CSIAttacherErrorRateHigh", (_, now) => now === "firing", 90_000);
    await driver.control.clearScripts();
    await waitAttached(failing, 60_000);
    const afterwards = await watchAlert("CSIAttacherErrorRateHigh", (_, now) => now === "inactive", 90_000);
    expect([[...whileFailing].includes("firing"), [...afterwards].at(-1)]).toEqual([true, "inactive"]);
  }, 240_000);

  it("fires CSIAttacherAttachesStuck while slow publishes back the queue up, and resolves it once the queue drains", async () => {
    const slow = ["slow-1", "slow-2", "slow-3", "slow-4"];
    // One worker, 30 s a publish: the fourth VA waits 90 s, over the 60 s threshold from the 60th second.
    await driver.control.script("ControllerPublishVolume", [{ delayMs: 30_000, times: slow.length }]);
    for (const name of slow) await createVolumeAttachment(name);
    const whileSlow = await watchAlert("CSIAttacherAttachesStuck", (_, now) => now === "firing", 120_000);
    await waitAttached(slow, 90_000);
    const afterwards = await watchAlert("CSIAttacherAttachesStuck", (_, now) => now === "inactive", 60_000);
    expect([[...whileSlow].includes("firing"), [...afterwards].at(-1)]).toEqual([true, "inactive"]);
  }, 300_000);

  it("shows the leader change: the standby leads once the leader stops, and attaches", async () => {
    let leaders: (string | undefined)[] = [];
    await waitForCondition(async () => (leaders = await leaderOf()).length === 1, { description: "one leader in Prometheus", timeoutMs: 10_000, intervalMs: 500 });
    const [before] = leaders;
    const leader = replicas.get(before ?? "");
    expect(leader).toBeDefined();
    await leader?.process.stop();
    const standby = pods.find((pod) => pod !== before) ?? "";
    await waitForCondition(async () => (await leaderOf()).includes(standby), { description: `${standby} leading`, timeoutMs: 30_000, intervalMs: 500 });
    const after = ["after-change-1", "after-change-2"];
    for (const name of after) await createVolumeAttachment(name);
    await waitAttached(after, 60_000);
    // A few seconds of the new leader in Prometheus, for the pictures drawn next.
    await waitForCondition(
      async () => (await prometheus.queryRange(`leader_election_master_status{pod="${standby}"} == 1`, Date.now() / 1000 - 10, Date.now() / 1000, 1)).some((series) => series.values.length >= 6),
      { description: `${standby} leading for 6 s in Prometheus`, timeoutMs: 30_000, intervalMs: 1_000 },
    );
  }, 120_000);

  it("answers every panel's query, with the driver and pod variables filled in, with data over the run", async () => {
    const end = Date.now() / 1000;
    const dashboard = JSON.parse(readFileSync(dashboardPath, "utf8")) as {
      panels: { title: string; fieldConfig?: { defaults: { unit: string } }; targets?: { refId: string; expr: string; legendFormat: string }[] }[];
    };
    // The variables first, as Grafana fills them.
    const variables = {
      drivers: await prometheus.labelValues("driver_name", 'csi_sidecar_operations_seconds_count{method_name="/csi.v1.Identity/GetPluginCapabilities"}', startedAt, end),
      pods: await prometheus.labelValues("pod", `csi_sidecar_operations_seconds_count{method_name="/csi.v1.Identity/GetPluginCapabilities", driver_name=~"${driverName}"}`, startedAt, end),
    };
    expect(variables).toEqual({ drivers: [driverName], pods: [...pods] });
    const fill = (expr: string) => expr.replaceAll("$driver", driverName).replaceAll("$pod", pods.join("|")).replaceAll("$__rate_interval", rateInterval);
    // Only cAdvisor and kube-state-metrics give these; neither runs on the test ground.
    const elsewhere = new Set(dashboardRows.flatMap((row) => row.panels.flatMap((panel) => panel.targets.filter((target) => target.source === "cadvisor" || target.source === "kube-state-metrics").map((target) => `${panel.title} ${target.refId}`))));
    const empty: string[] = [];
    const skipped: string[] = [];
    const pictures = join(dir, "pictures");
    mkdirSync(pictures, { recursive: true });
    for (const panel of dashboard.panels) {
      const queried: QueriedTarget[] = [];
      for (const target of panel.targets ?? []) {
        const name = `${panel.title} ${target.refId}`;
        if (elsewhere.has(name)) {
          skipped.push(name);
          continue;
        }
        const series = await prometheus.queryRange(fill(target.expr), startedAt, end, 2);
        // A quantile of no observations is NaN: data means a number.
        if (!series.some((one) => one.values.some(([, value]) => Number.isFinite(Number(value))))) empty.push(name);
        queried.push({ legendFormat: target.legendFormat, series });
      }
      // The main panels as SVG (into the test's directory, and MONITORING_PICTURES_DIR when set).
      if (!picturedPanels.includes(panel.title)) continue;
      const file = pictureFile(panel.title);
      const svg = panelPicture(panel.title, panel.fieldConfig?.defaults.unit ?? "", queried, startedAt);
      for (const target of [pictures, process.env["MONITORING_PICTURES_DIR"]]) if (target !== undefined) writeFileSync(join(target, file), svg);
    }
    expect({ empty, skipped }).toEqual({ empty: [], skipped: ["Memory E", "Memory F"] });
  }, 60_000);
});
