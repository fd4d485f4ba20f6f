import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AdminClient, type KubeObject } from "../ground/admin-client";
import { waitForCondition } from "../ground/managed-process";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { launchFakeCsiDriver, type FakeCsiDriver } from "../ground/fake-csi-driver/launch";
import { startAttacher, type AttacherProcess } from "../ground/attacher-process";
import { upstreamRbacKubeconfig } from "./support/upstream-rbac";
import { csiNode, paths, persistentVolume, volumeAttachment, type PersistentVolumeJson, type VolumeAttachmentJson } from "../ground/objects";

/**
 * deploy/kubernetes/rbac.yaml is all the attacher needs: run it as the csi-attacher
 * service account with exactly those rules (the test ground authorizes by
 * RBAC), with leader election, through an attach that fails and one that
 * succeeds, and expect no request to be forbidden.
 */
const driverName = "rbac.fake.csi.test";
const finalizer = "external-attacher/rbac-fake-csi-test";
const node = "rbac-node";
let cluster: TestCluster;
let admin: AdminClient;
let driver: FakeCsiDriver;
let attacher: AttacherProcess | undefined;
let dir: string;

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  dir = mkdtempSync(join(tmpdir(), "e2e-rbac-"));
  const { kubeconfig } = await upstreamRbacKubeconfig(cluster, admin, dir);

  driver = await launchFakeCsiDriver({ directory: dir, config: { name: driverName } });
  await admin.create(paths.csiNodes, csiNode(node, [{ name: driverName, nodeID: `${node}-id` }]));
  attacher = await startAttacher(
    {
      kubeconfig,
      csiAddress: driver.csiSocket,
      logDir: dir,
      args: ["--leader-election", "--leader-election-namespace=default", "--retry-interval-start=100ms", "--retry-interval-max=500ms"],
    },
    false,
  );
});

afterAll(async () => {
  await attacher?.[Symbol.asyncDispose]();
  await driver?.[Symbol.asyncDispose]();
  await cluster?.stop();
});

describe("deploy/kubernetes/rbac.yaml", () => {
  it("lets the csi-attacher service account take the Lease, attach, record failure events, detach and release the PV, with nothing forbidden", async () => {
    if (!attacher) throw new Error("attacher not started");
    await attacher.waitForLog(/"Caches synced"/);
    const lease = await admin.get<KubeObject & { spec?: { holderIdentity?: string } }>(
      "/apis/coordination.k8s.io/v1/namespaces/default/leases/external-attacher-leader-rbac-fake-csi-test",
    );
    expect(lease.spec?.holderIdentity).not.toBe("");

    await driver.control.script("ControllerPublishVolume", [{ code: "Internal", message: "not yet", times: 2, volumeId: "vol-rbac" }]);
    await admin.create(paths.persistentVolumes, persistentVolume("pv-rbac", { driver: driverName, volumeHandle: "vol-rbac" }));
    await admin.create(paths.volumeAttachments, volumeAttachment("rbac", driverName, node, "pv-rbac"));
    await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("rbac"), (va) => va?.status?.attached === true, 30_000);
    // Two driver failures: the first event is created, the repeat patched into
    // its count. (A first try that beat the PV's watch event makes an event of its own.)
    await waitForCondition(
      async () => {
        const events = await admin.list<KubeObject & { count?: number; message?: string }>("/api/v1/namespaces/default/events", { fieldSelector: "involvedObject.name=rbac,reason=AttachFailed" });
        return events.items.some((event) => event.message?.includes("desc = not yet") === true && event.count === 2);
      },
      { description: "the AttachFailed event, seen twice", timeoutMs: 30_000, watch: [attacher.process] },
    );
    const pv = await admin.get<PersistentVolumeJson>(paths.persistentVolume("pv-rbac"));
    expect(pv.metadata.finalizers).toContain(finalizer);

    await admin.delete(paths.volumeAttachment("rbac"));
    await admin.waitFor(paths.volumeAttachment("rbac"), (va) => va === null, 30_000);
    // The PV goes once the attacher lifts its finalizer (pv-protection has no controller here: the test lifts it).
    await admin.delete(paths.persistentVolume("pv-rbac"));
    await liftPvProtection("pv-rbac");
    await admin.waitFor(paths.persistentVolume("pv-rbac"), (object) => object === null, 30_000);
    expect(attacher.log()).not.toMatch(/forbidden/i);
  });
});

/**
 * liftPvProtection removes kubernetes.io/pv-protection, which no controller
 * removes on this bare apiserver, without touching the attacher's finalizer
 * (which it may be removing at the same moment: the "test" op makes a
 * shifted index fail instead of removing the wrong entry, and we try again).
 */
async function liftPvProtection(name: string): Promise<void> {
  const protection = "kubernetes.io/pv-protection";
  await waitForCondition(
    async () => {
      const pv = await admin.get<PersistentVolumeJson>(paths.persistentVolume(name));
      const index = pv.metadata.finalizers?.indexOf(protection) ?? -1;
      if (index === -1) return true;
      const at = `/metadata/finalizers/${index}`;
      await admin.patch(paths.persistentVolume(name), [{ op: "test", path: at, value: protection }, { op: "remove", path: at }], "json");
      return true;
    },
    { description: `${protection} lifted from PV ${name}`, timeoutMs: 30_000 },
  );
}
