import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AdminApiError, AdminClient } from "../ground/admin-client";
import { spawnManaged } from "../ground/managed-process";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { launchFakeCsiDriver } from "../ground/fake-csi-driver/launch";
import { AttacherProcess, attacherBinary } from "../ground/attacher-process";
import { containerArgs, containerEnv, driverChartArgs, type DriverChartArgs } from "../ground/driver-chart-args";

/**
 * The compiled attacher takes each CSI driver chart's csi-attacher args
 * unchanged: only `--kubeconfig` is added, because the test runs outside a
 * pod, and the chart's socket path stands for the test's socket.
 */
let cluster: TestCluster;
let admin: AdminClient;

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  // The namespaces the charts install into, where a leader-election Lease would live.
  for (const namespace of new Set(driverChartArgs.map((chart) => chart.namespace))) {
    await createNamespace(namespace);
  }
});

afterAll(async () => {
  await cluster?.stop();
});

async function createNamespace(name: string): Promise<void> {
  try {
    await admin.create("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name } });
  } catch (e: unknown) {
    // default and kube-system exist in every cluster.
    if (e instanceof AdminApiError && e.status === 409) return;
    throw e;
  }
}

async function startChartAttacher(chart: DriverChartArgs, socketPath: string, logDir: string): Promise<AttacherProcess> {
  const process = spawnManaged({
    name: "attacher",
    command: [attacherBinary, `--kubeconfig=${cluster.kubeconfigPath}`, ...containerArgs(chart, socketPath)],
    logDir,
    env: { ...Bun.env, ...containerEnv(chart, socketPath) },
  });
  return new AttacherProcess(process);
}

describe("CSI driver charts' csi-attacher args", () => {
  it.each(driverChartArgs.map((chart) => [chart.driverName, chart] as const))(
    "%s's list starts the attacher unchanged, up to synced caches",
    async (_driverName, chart) => {
      const dir = mkdtempSync(join(tmpdir(), "e2e-chart-"));
      await using driver = await launchFakeCsiDriver({ directory: dir, config: { name: chart.driverName } });
      await using attacher = await startChartAttacher(chart, driver.csiSocket, dir);
      await attacher.waitForLog(/"Caches synced"/, 60_000);
      // The driver's name reached the attacher through the socket the args named.
      expect((await driver.control.calls("GetPluginInfo")).length).toBe(1);
      expect(attacher.log()).not.toContain("invalid value");
    },
    120_000,
  );
});
