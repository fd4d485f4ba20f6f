import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AdminClient } from "../ground/admin-client";
import { ensureComponents } from "../ground/components";
import { freeLoopbackPorts } from "../ground/free-ports";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { launchFakeCsiDriver } from "../ground/fake-csi-driver/launch";
import { attacherBinary, startAttacher } from "../ground/attacher-process";
import { startFakeDriverSetup, stopFakeDriverSetup, type FakeDriverSetup } from "./support/fake-driver-ground";
import { listeningTcpPorts } from "./support/listening-sockets";
import { paths, persistentVolume, volumeAttachment, type VolumeAttachmentJson } from "../ground/objects";
import { parseSamples, type MetricSample } from "../ground/prometheus-text";

/**
 * The HTTP endpoint of the compiled attacher, as Prometheus and kubelet's
 * probes see it: metrics named as upstream's, linted by Prometheus' own
 * promtool, health and readiness, and no socket at all without the flag.
 */
let cluster: TestCluster;
let admin: AdminClient;
let promtool: string;
let setup: FakeDriverSetup;
let port: number;
const node = "metrics-node";
const driverName = "metrics.fake.csi.test";

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  promtool = (await ensureComponents()).promtool;
  ({ http: port } = await freeLoopbackPorts(["http"]));
  setup = await startFakeDriverSetup(cluster, admin, { driverName, nodes: [node], attacherArgs: [`--http-endpoint=127.0.0.1:${port}`] });
});

afterAll(async () => {
  await stopFakeDriverSetup(setup);
  await cluster?.stop();
});

async function get(path: string): Promise<{ status: number; body: string; contentType: string | null }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: response.status, body: await response.text(), contentType: response.headers.get("content-type") };
}

function find(samples: readonly MetricSample[], name: string, labels: Record<string, string> = {}): MetricSample[] {
  return samples.filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value));
}

async function attach(name: string): Promise<void> {
  await admin.create(paths.persistentVolumes, persistentVolume(`pv-${name}`, { driver: driverName, volumeHandle: `vol-${name}` }));
  await admin.create(paths.volumeAttachments, volumeAttachment(name, driverName, node, `pv-${name}`));
  await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment(name), (va) => va?.status?.attached === true, 30_000);
}

describe("HTTP endpoint", () => {
  it("answers /healthz, and /readyz once the driver was probed and the caches synced", async () => {
    // startFakeDriverSetup returned after the attacher logged "Caches synced".
    expect([await get("/healthz"), await get("/readyz")].map(({ status, body }) => ({ status, body }))).toEqual([
      { status: 200, body: "ok" },
      { status: 200, body: "ok" },
    ]);
  });

  it("exports the publish as csi_sidecar_operations_seconds with upstream's labels, the workqueue_* series of both queues, and process_*", async () => {
    await attach("scraped");
    const scrape = await get("/metrics");
    expect([scrape.status, scrape.contentType]).toEqual([200, "text/plain; version=0.0.4; charset=utf-8"]);
    const samples = parseSamples(scrape.body);

    const publishCount = find(samples, "csi_sidecar_operations_seconds_count", {
      driver_name: driverName,
      method_name: "/csi.v1.Controller/ControllerPublishVolume",
      grpc_status_code: "OK",
    });
    expect(publishCount.map((sample) => [Object.keys(sample.labels).sort(), sample.value >= 1])).toEqual([[["driver_name", "grpc_status_code", "method_name"], true]]);
    // Start-up calls count too: Probe and GetPluginInfo before the driver had told its name, the capability calls after, as upstream.
    const startupCalls = ["Identity/Probe", "Identity/GetPluginInfo", "Identity/GetPluginCapabilities", "Controller/ControllerGetCapabilities"].map((method) =>
      find(samples, "csi_sidecar_operations_seconds_count", { method_name: `/csi.v1.${method}` }).map((sample) => `${method} ${sample.labels["driver_name"]}`),
    );
    expect(startupCalls).toEqual([
      ["Identity/Probe unknown-driver"],
      ["Identity/GetPluginInfo unknown-driver"],
      [`Identity/GetPluginCapabilities ${driverName}`],
      [`Controller/ControllerGetCapabilities ${driverName}`],
    ]);

    const workQueueFamilies = [
      "workqueue_depth",
      "workqueue_adds_total",
      "workqueue_queue_duration_seconds_count",
      "workqueue_work_duration_seconds_count",
      "workqueue_unfinished_work_seconds",
      "workqueue_longest_running_processor_seconds",
      "workqueue_retries_total",
      "csi_attacher_workqueue_oldest_waiting_seconds",
    ];
    const queueNames = (family: string) => find(samples, family).map((sample) => sample.labels["name"]).sort();
    expect(workQueueFamilies.map(queueNames)).toEqual(workQueueFamilies.map(() => ["csi-attacher-pv", "csi-attacher-va"]));
    expect(find(samples, "workqueue_adds_total", { name: "csi-attacher-va" })[0]?.value).toBeGreaterThanOrEqual(1);

    // The work client's API requests (its lists and watches at least), and its waits for --kube-api-qps's token bucket.
    expect([
      find(samples, "rest_client_requests_total", { method: "GET", code: "200" }).reduce((sum, sample) => sum + sample.value, 0) >= 3,
      (find(samples, "rest_client_rate_limiter_duration_seconds_count", { verb: "GET" })[0]?.value ?? 0) >= 3,
    ]).toEqual([true, true]);

    const processFamilies = [
      "process_cpu_seconds_total",
      "process_resident_memory_bytes",
      "process_virtual_memory_bytes",
      "process_start_time_seconds",
      "process_open_fds",
      "process_max_fds",
      "csi_attacher_resident_anonymous_memory_bytes",
      "csi_attacher_javascript_heap_used_bytes",
    ];
    expect(processFamilies.filter((family) => !((find(samples, family)[0]?.value ?? 0) > 0))).toEqual([]);
    // prom-client's process_heap_bytes would be VmData, gigabytes of reserved address space under Bun; the JavaScript heap is a part of the resident memory.
    const value = (family: string) => find(samples, family)[0]?.value ?? Number.NaN;
    expect([find(samples, "process_heap_bytes"), value("csi_attacher_javascript_heap_used_bytes") < value("process_resident_memory_bytes")]).toEqual([[], true]);
  });

  it("serves output that Prometheus' own linter accepts (promtool check metrics)", async () => {
    await attach("linted");
    const scrape = await get("/metrics");
    const lint = Bun.spawn([promtool, "check", "metrics"], { stdin: new Blob([scrape.body]), stdout: "pipe", stderr: "pipe" });
    const [code, stdout, stderr] = await Promise.all([lint.exited, new Response(lint.stdout).text(), new Response(lint.stderr).text()]);
    expect({ code, stdout, stderr }).toEqual({ code: 0, stdout: "", stderr: "" });
  });

  it("has no leader election health check without --leader-election, and answers 404 for unknown paths", async () => {
    expect([(await get("/healthz/leader-election")).status, (await get("/nope")).status]).toEqual([404, 404]);
  });
});

describe("a driver that in-tree volumes migrate to", () => {
  it("labels its operations with migrated: \"true\" for a translated in-tree PV, \"false\" for a CSI PV", async () => {
    const ebsDriver = "ebs.csi.aws.com";
    const { http: ebsPort } = await freeLoopbackPorts(["http"]);
    const ebs = await startFakeDriverSetup(cluster, admin, { driverName: ebsDriver, nodes: [node], attacherArgs: [`--http-endpoint=127.0.0.1:${ebsPort}`] });
    try {
      await admin.create(paths.persistentVolumes, persistentVolume("pv-ebs-csi", { driver: ebsDriver, volumeHandle: "vol-0123456789abcdef0" }));
      await admin.create(paths.persistentVolumes, {
        apiVersion: "v1",
        kind: "PersistentVolume",
        metadata: { name: "pv-ebs-in-tree", annotations: { "pv.kubernetes.io/migrated-to": ebsDriver } },
        spec: {
          capacity: { storage: "1Gi" },
          accessModes: ["ReadWriteOnce"],
          persistentVolumeReclaimPolicy: "Retain",
          awsElasticBlockStore: { volumeID: "aws://us-east-1a/vol-0fedcba9876543210", fsType: "ext4" },
        },
      });
      for (const name of ["ebs-csi", "ebs-in-tree"]) {
        await admin.create(paths.volumeAttachments, volumeAttachment(name, ebsDriver, node, `pv-${name}`));
        await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment(name), (va) => va?.status?.attached === true, 30_000);
      }
      const samples = parseSamples(await (await fetch(`http://127.0.0.1:${ebsPort}/metrics`)).text());
      const publish = find(samples, "csi_sidecar_operations_seconds_count", { method_name: "/csi.v1.Controller/ControllerPublishVolume" });
      const labels = { driver_name: ebsDriver, grpc_status_code: "OK", method_name: "/csi.v1.Controller/ControllerPublishVolume" };
      expect(publish.map((sample) => [sample.labels, sample.value])).toEqual([
        [{ ...labels, migrated: "false" }, 1],
        [{ ...labels, migrated: "true" }, 1],
      ]);
    } finally {
      await stopFakeDriverSetup(ebs);
    }
  });
});

describe("without --http-endpoint", () => {
  it("opens no listening socket at all", async () => {
    const quiet = await startFakeDriverSetup(cluster, admin, { driverName: "no-http.fake.csi.test", nodes: [node] });
    try {
      // The flagged attacher shows the check can see a listener.
      expect([listeningTcpPorts(setup.attacher.process.pid), listeningTcpPorts(quiet.attacher.process.pid)]).toEqual([[port], []]);
    } finally {
      await stopFakeDriverSetup(quiet);
    }
  });
});

describe("flags", () => {
  it("stops with exit code 1 and one line when both --http-endpoint and --metrics-address are set, before listening", () => {
    const run = Bun.spawnSync([attacherBinary, "--http-endpoint=127.0.0.1:0", "--metrics-address=127.0.0.1:0", "--csi-address=/nonexistent"]);
    expect({ code: run.exitCode, stderr: run.stderr.toString().trimEnd().split("\n").length, stdout: run.stdout.toString() }).toEqual({ code: 1, stderr: 1, stdout: "" });
    expect(run.stderr.toString()).toContain("only one of --http-endpoint");
  });

  it("serves the metrics on the deprecated --metrics-address and a custom --metrics-path", async () => {
    const dir = mkdtempSync(join(tmpdir(), "e2e-http-metrics-address-"));
    const { http: oldPort } = await freeLoopbackPorts(["http"]);
    await using driver = await launchFakeCsiDriver({ directory: dir, config: { name: "metrics-address.fake.csi.test" } });
    await using _attacher = await startAttacher({
      kubeconfig: cluster.kubeconfigPath,
      csiAddress: driver.csiSocket,
      logDir: dir,
      args: [`--metrics-address=127.0.0.1:${oldPort}`, "--metrics-path=/custom"],
    });
    const [custom, standard] = await Promise.all([fetch(`http://127.0.0.1:${oldPort}/custom`), fetch(`http://127.0.0.1:${oldPort}/metrics`)]);
    expect([custom.status, (await custom.text()).includes("# TYPE workqueue_depth gauge"), standard.status]).toEqual([200, true, 404]);
  });
});

describe("readiness before start-up finished", () => {
  it("answers /readyz 503 and /healthz 200 while the driver says it is not ready", async () => {
    const dir = mkdtempSync(join(tmpdir(), "e2e-http-not-ready-"));
    const { http: latePort } = await freeLoopbackPorts(["http"]);
    await using driver = await launchFakeCsiDriver({ directory: dir, config: { name: "not-ready.fake.csi.test", probeReady: false } });
    await using attacher = await startAttacher(
      { kubeconfig: cluster.kubeconfigPath, csiAddress: driver.csiSocket, logDir: dir, args: [`--http-endpoint=127.0.0.1:${latePort}`] },
      false,
    );
    await attacher.waitForLog(/"CSI driver is not ready"/);
    const url = (path: string) => `http://127.0.0.1:${latePort}${path}`;
    const [healthz, readyz] = await Promise.all([fetch(url("/healthz")), fetch(url("/readyz"))]);
    expect([healthz.status, readyz.status, await readyz.text()]).toEqual([200, 503, "not ready: waiting for driver-probed, caches-synced\n"]);
  });
});
