/**
 * The test ground itself: a real etcd + kube-apiserver pair and the mock CSI
 * driver start, behave like the real thing, and leave nothing behind.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { persistentVolume } from "../ground/objects";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AdminClient, isNotFound, type KubeObject } from "../ground/admin-client";
import { ensureComponents, type ComponentPaths } from "../ground/components";
import { acceptsConnection, startMockCsiDriver } from "../ground/mock-csi-driver";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";

const VA_PATH = "/apis/storage.k8s.io/v1/volumeattachments";
const PV_PATH = "/api/v1/persistentvolumes";

let components: ComponentPaths;
let cluster: TestCluster;
let admin: AdminClient;

beforeAll(async () => {
  components = await ensureComponents();
  cluster = await startTestCluster({ components });
  admin = new AdminClient(cluster);
});

afterAll(async () => {
  await cluster?.stop();
});

/** True while a process with this pid exists (signal 0 only checks). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e: unknown) {
    if (e instanceof Error && "code" in e && e.code === "ESRCH") return false;
    throw e;
  }
}

describe("test cluster", () => {
  it("answers /readyz with ok to the admin token over TLS verified against its CA", async () => {
    const res = await fetch(`${cluster.server}/readyz`, {
      headers: { Authorization: `Bearer ${cluster.adminToken}` },
      tls: { ca: cluster.caPem },
    });
    expect({ status: res.status, body: await res.text() }).toEqual({ status: 200, body: "ok" });
  });

  it("writes a kubeconfig whose server, CA data and token reach the apiserver", async () => {
    const kubeconfig = Bun.YAML.parse(readFileSync(cluster.kubeconfigPath, "utf8")) as {
      clusters: { cluster: { server: string; "certificate-authority-data": string } }[];
      users: { user: { token: string } }[];
    };
    const server = kubeconfig.clusters[0]?.cluster.server ?? "";
    const ca = Buffer.from(kubeconfig.clusters[0]?.cluster["certificate-authority-data"] ?? "", "base64").toString();
    const res = await fetch(`${server}/api/v1/namespaces/default`, {
      headers: { Authorization: `Bearer ${kubeconfig.users[0]?.user.token ?? ""}` },
      tls: { ca },
    });
    expect(res.status).toBe(200);
  });

  it("stores a VolumeAttachment and returns it as created", async () => {
    const spec = { attacher: "mock.csi.test", nodeName: "node-1", source: { persistentVolumeName: "pv-a" } };
    await admin.create(VA_PATH, { apiVersion: "storage.k8s.io/v1", kind: "VolumeAttachment", metadata: { name: "va-a" }, spec });
    const stored = await admin.get(`${VA_PATH}/va-a`);
    expect({ name: stored.metadata?.name, spec: stored["spec"] }).toEqual({ name: "va-a", spec });
  });

  it("reports a missing object as NotFound", async () => {
    const error = await admin.get(`${VA_PATH}/no-such-va`).catch((e: unknown) => e);
    expect(isNotFound(error)).toBe(true);
  });

  it("adds kubernetes.io/pv-protection to new PVs", async () => {
    const created = await admin.create<KubeObject>(PV_PATH, persistentVolume("pv-protected", { driver: "mock.csi.test", volumeHandle: "handle-pv-protected" }));
    expect(created.metadata?.finalizers).toEqual(["kubernetes.io/pv-protection"]);
  });

  it("keeps a deleted PV until a JSON patch removes its pv-protection finalizer", async () => {
    await admin.create(PV_PATH, persistentVolume("pv-deleted", { driver: "mock.csi.test", volumeHandle: "handle-pv-deleted" }));
    await admin.delete(`${PV_PATH}/pv-deleted`);
    // No controller runs here to release the PV, so it only gets marked.
    const marked = await admin.get(`${PV_PATH}/pv-deleted`);
    expect(marked.metadata?.deletionTimestamp).toBeString();

    // "test" first, so the index-based "remove" cannot drop another finalizer.
    await admin.patch(
      `${PV_PATH}/pv-deleted`,
      [
        { op: "test", path: "/metadata/finalizers/0", value: "kubernetes.io/pv-protection" },
        { op: "remove", path: "/metadata/finalizers/0" },
      ],
      "json",
    );
    expect(await admin.waitFor(`${PV_PATH}/pv-deleted`, (pv) => pv === null, 10_000)).toBeNull();
  });
});

describe("test cluster lifecycle", () => {
  it("leaves no etcd, kube-apiserver or kube-controller-manager process and no temp dir after stop()", async () => {
    const own = await startTestCluster({ components });
    const controllerManager = await own.startControllerManager();
    const pids = [...own.processes, controllerManager.process].map((child) => child.pid);
    expect(pids.map(isAlive)).toEqual([true, true, true]);
    await own.stop();
    expect({ alive: pids.map(isAlive), dirExists: existsSync(own.dir) }).toEqual({ alive: [false, false, false], dirExists: false });
  });

  it("keeps objects and the admin token when restarted in the same dir", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bun-csi-attacher-restart-"));
    try {
      const first = await startTestCluster({ components, dir });
      await new AdminClient(first).create(PV_PATH, persistentVolume("pv-survivor", { driver: "mock.csi.test", volumeHandle: "handle-pv-survivor" }));
      await first.stop();

      await using second = await startTestCluster({ components, dir });
      const survivor = await new AdminClient(second).get(`${PV_PATH}/pv-survivor`);
      expect({ token: second.adminToken, name: survivor.metadata?.name }).toEqual({ token: first.adminToken, name: "pv-survivor" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("mock CSI driver", () => {
  it("accepts connections on its socket once started, and none after stop()", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bun-csi-attacher-driver-"));
    try {
      const driver = await startMockCsiDriver({ binary: components.mockCsiDriver, dir, name: "mock.csi.test" });
      expect({ nodeId: driver.nodeId, accepts: await acceptsConnection(driver.socket) }).toEqual({
        nodeId: "mock.csi.test",
        accepts: true,
      });
      await driver.stop();
      expect({ alive: isAlive(driver.process.pid), accepts: await acceptsConnection(driver.socket) }).toEqual({ alive: false, accepts: false });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
