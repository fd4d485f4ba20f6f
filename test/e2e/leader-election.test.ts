import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AdminClient, type KubeObject } from "../cluster/admin-client";
import { freeLoopbackPorts } from "../cluster/free-ports";
import { spawnManaged } from "../cluster/managed-process";
import { startTestCluster, type TestCluster } from "../cluster/test-cluster";
import { launchFakeCsiDriver, type FakeCsiDriver } from "../drivers/fake-csi-driver/launch";
import { AttacherProcess, attacherBinary } from "./support/attacher-process";
import { csiNode, paths, persistentVolume, volumeAttachment, type VolumeAttachmentJson } from "./support/objects";
import { parseSamples } from "./support/prometheus-text";

/**
 * Leader election of the compiled attacher: several replicas share one CSI
 * driver and one Lease; only the holder works.
 *
 * Upstream's identity is the hostname, with no flag to override it, and in
 * a pod every replica has its own. Here every replica runs in a UTS
 * namespace of its own (`unshare --uts`, as root) with its own hostname, so
 * the binary under test is unchanged.
 */
const driverName = "leader.fake.csi.test";
const namespace = "csi-leader";
const leaseName = "external-attacher-leader-leader-fake-csi-test";
const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${leaseName}`;
const node = "leader-node";
const leaseDurationMs = 6_000;
const retryPeriodMs = 1_000;
// client-go's acquire loop waits retryPeriod plus up to 1.2 x retryPeriod between tries.
const maxAcquireWaitMs = retryPeriodMs * 2.2;

let cluster: TestCluster;
let admin: AdminClient;
let driver: FakeCsiDriver;
let dir: string;
const replicas: AttacherProcess[] = [];
/** Each replica's --http-endpoint port, by hostname. */
const ports: Record<string, number> = {};

interface LeaseJson extends KubeObject {
  spec?: { holderIdentity?: string; leaseDurationSeconds?: number; leaseTransitions?: number; renewTime?: string; acquireTime?: string };
}

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  dir = mkdtempSync(join(tmpdir(), "e2e-leader-"));
  driver = await launchFakeCsiDriver({ directory: dir, config: { name: driverName } });
  await admin.create("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
  await admin.create(paths.csiNodes, csiNode(node, [{ name: driverName, nodeID: `${node}-id` }]));
});

afterAll(async () => {
  for (const replica of replicas) await replica.process.stop();
  await driver?.[Symbol.asyncDispose]();
  await cluster?.stop();
});

/** startReplica runs the attacher with leader election under its own hostname; the namespace comes from POD_NAMESPACE. */
async function startReplica(hostname: string): Promise<AttacherProcess> {
  const { http } = await freeLoopbackPorts(["http"]);
  ports[hostname] = http;
  const flags = [
    `--http-endpoint=127.0.0.1:${http}`,
    `--kubeconfig=${cluster.kubeconfigPath}`,
    `--csi-address=${driver.csiSocket}`,
    "-v=4",
    "--leader-election",
    `--leader-election-lease-duration=${leaseDurationMs}ms`,
    "--leader-election-renew-deadline=3s",
    `--leader-election-retry-period=${retryPeriodMs}ms`,
    "--leader-election-labels=app:csi-attacher,tier:storage",
    "--feature-gates=ReleaseLeaderElectionOnExit=true",
  ];
  const process = spawnManaged({
    name: hostname,
    command: ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', hostname, attacherBinary, ...flags],
    logDir: dir,
    env: { ...Bun.env, POD_NAMESPACE: namespace },
  });
  const replica = new AttacherProcess(process);
  replicas.push(replica);
  return replica;
}

/** endpoint fetches one path of a replica's HTTP endpoint. */
async function endpoint(hostname: string, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${ports[hostname]}${path}`);
  return { status: res.status, body: await res.text() };
}

/** masterStatus reads leader_election_master_status for our Lease from a replica's /metrics. */
async function masterStatus(hostname: string): Promise<string | undefined> {
  const { body } = await endpoint(hostname, "/metrics");
  return body.match(new RegExp(`^leader_election_master_status\\{name="${leaseName}"\\} (\\S+)$`, "m"))?.[1];
}

function waitForHolder(holder: string, timeoutMs = 30_000): Promise<LeaseJson | null> {
  return admin.waitFor<LeaseJson>(leasePath, (lease) => lease?.spec?.holderIdentity === holder, timeoutMs);
}

async function attach(name: string): Promise<void> {
  await admin.create(paths.persistentVolumes, persistentVolume(`pv-${name}`, { driver: driverName, volumeHandle: `vol-${name}` }));
  await admin.create(paths.volumeAttachments, volumeAttachment(name, driverName, node, `pv-${name}`));
  await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment(name), (va) => va?.status?.attached === true, 30_000);
}

async function publishesOf(volumeId: string): Promise<number> {
  const calls = await driver.control.calls("ControllerPublishVolume");
  return calls.filter((call) => (call.request as { volumeId?: string }).volumeId === volumeId).length;
}

describe("leader election", () => {
  let first: AttacherProcess;
  let second: AttacherProcess;
  let third: AttacherProcess;

  it("lets only the Lease holder work: the standby neither lists nor publishes", async () => {
    first = await startReplica("replica-a");
    const lease = await waitForHolder("replica-a");
    expect(lease?.metadata?.labels).toEqual({ app: "csi-attacher", tier: "storage" });
    expect(lease?.spec?.leaseDurationSeconds).toBe(leaseDurationMs / 1000);
    await first.waitForLog(/"Caches synced"/);

    second = await startReplica("replica-b");
    await second.waitForLog(/"Attempting to acquire leader lease"/);
    await attach("le-one");
    // The standby saw the holder's renewals and kept waiting.
    await second.waitForLog(/"Lock is held by another replica and has not yet expired"/);
    expect(await publishesOf("vol-le-one")).toBe(1);
    expect(second.log()).not.toContain("Caches synced");
    expect(second.log()).not.toContain("ControllerPublish");
    // What dashboards and probes see: 1 on the leader, 0 on the standby, both healthy.
    expect([await masterStatus("replica-a"), await masterStatus("replica-b")]).toEqual(["1", "0"]);
    // As the Go standby, whose queues exist before it leads: per-pod panels show every replica.
    const standbyQueues = parseSamples((await endpoint("replica-b", "/metrics")).body)
      .filter((sample) => sample.name === "workqueue_depth" || sample.name === "csi_attacher_workqueue_oldest_waiting_seconds")
      .map((sample) => `${sample.name}{name="${sample.labels["name"]}"} ${sample.value}`)
      .sort();
    expect(standbyQueues).toEqual([
      'csi_attacher_workqueue_oldest_waiting_seconds{name="csi-attacher-pv"} 0',
      'csi_attacher_workqueue_oldest_waiting_seconds{name="csi-attacher-va"} 0',
      'workqueue_depth{name="csi-attacher-pv"} 0',
      'workqueue_depth{name="csi-attacher-va"} 0',
    ]);
    expect([await endpoint("replica-a", "/healthz/leader-election"), await endpoint("replica-b", "/healthz/leader-election")]).toEqual([
      { status: 200, body: "ok" },
      { status: 200, body: "ok" },
    ]);
  });

  it("hands over to the standby within the lease duration plus its retry wait after kill -9 of the leader", async () => {
    const before = await admin.get<LeaseJson>(leasePath);
    process.kill(first.process.pid, "SIGKILL");
    await first.process.exited;
    const killedAt = performance.now();
    const lease = await waitForHolder("replica-b", 60_000);
    const takeoverMs = performance.now() - killedAt;
    // The standby restarts its lease clock whenever it sees the record change, so
    // the worst case is: one retry wait to see the last renewal, the lease duration,
    // one more retry wait to try again.
    expect(takeoverMs).toBeLessThan(leaseDurationMs + 2 * maxAcquireWaitMs + 2_000);
    expect(lease?.spec?.leaseTransitions).toBe((before.spec?.leaseTransitions ?? 0) + 1);
    await second.waitForLog(/"Caches synced"/);
    expect(await masterStatus("replica-b")).toBe("1");
    await attach("le-two");
    expect(await publishesOf("vol-le-two")).toBe(1);
  });

  it("releases the Lease on SIGTERM so the standby takes over at once, well within the lease duration", async () => {
    third = await startReplica("replica-c");
    await third.waitForLog(/"Attempting to acquire leader lease"/);
    await third.waitForLog(/"Lock is held by another replica and has not yet expired"/);
    process.kill(second.process.pid, "SIGTERM");
    const sentAt = performance.now();
    expect(await second.process.exited).toBe(0);
    expect(second.log()).toContain('"Released leader lease"');
    await waitForHolder("replica-c", 30_000);
    const takeoverMs = performance.now() - sentAt;
    expect(takeoverMs).toBeLessThan(leaseDurationMs);
    await third.waitForLog(/"Caches synced"/);
  });

  it("exits 1 with \"Stopped leading\" when another holder takes the Lease", async () => {
    const lease = await admin.get<LeaseJson>(leasePath);
    const now = new Date().toISOString().replace("Z", "000Z");
    await admin.replace(leasePath, { ...lease, spec: { ...lease.spec, holderIdentity: "intruder", leaseDurationSeconds: 3600, acquireTime: now, renewTime: now } });
    expect(await third.process.exited).toBe(1);
    expect(third.log()).toContain('"Stopped leading"');
  });
});
