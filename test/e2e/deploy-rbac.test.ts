import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AdminClient, type KubeObject } from "../cluster/admin-client";
import { waitForCondition } from "../cluster/managed-process";
import { startTestCluster, type TestCluster } from "../cluster/test-cluster";
import { launchFakeCsiDriver, type FakeCsiDriver } from "../drivers/fake-csi-driver/launch";
import { startAttacher, type AttacherProcess } from "./support/attacher-process";
import { csiNode, paths, persistentVolume, volumeAttachment, type VolumeAttachmentJson } from "./support/objects";

/**
 * deploy/rbac.yaml is all the attacher needs: run it as the csi-attacher
 * service account with exactly those rules (the test ground authorizes by
 * RBAC), with leader election, through an attach that fails and one that
 * succeeds, and expect no request to be forbidden.
 */
const driverName = "rbac.fake.csi.test";
const node = "rbac-node";
let cluster: TestCluster;
let admin: AdminClient;
let driver: FakeCsiDriver;
let attacher: AttacherProcess | undefined;
let dir: string;

/** Where each kind of deploy/rbac.yaml object is created. */
function collectionOf(object: KubeObject): string {
  const namespace = object.metadata?.namespace ?? "default";
  switch (object.kind) {
    case "ServiceAccount":
      return `/api/v1/namespaces/${namespace}/serviceaccounts`;
    case "ClusterRole":
      return "/apis/rbac.authorization.k8s.io/v1/clusterroles";
    case "ClusterRoleBinding":
      return "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings";
    case "Role":
      return `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles`;
    case "RoleBinding":
      return `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`;
    default:
      throw new Error(`deploy/rbac.yaml holds an unexpected ${object.kind}`);
  }
}

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  dir = mkdtempSync(join(tmpdir(), "e2e-rbac-"));
  const documents = Bun.YAML.parse(readFileSync(join(import.meta.dir, "../../deploy/rbac.yaml"), "utf8")) as KubeObject[];
  for (const object of documents) await admin.create(collectionOf(object), object);

  const token = await admin.request<{ status: { token: string } }>("POST", "/api/v1/namespaces/default/serviceaccounts/csi-attacher/token", {
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenRequest",
    spec: { expirationSeconds: 3600 },
  });
  const kubeconfig = join(dir, "csi-attacher.kubeconfig");
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "e2e", cluster: { server: cluster.server, "certificate-authority-data": Buffer.from(cluster.caPem).toString("base64") } }],
      users: [{ name: "csi-attacher", user: { token: token.status.token } }],
      contexts: [{ name: "e2e", context: { cluster: "e2e", user: "csi-attacher" } }],
      "current-context": "e2e",
    }),
  );
  // RBAC learns of new bindings through its informers: wait until ours applies.
  await waitForCondition(
    async () => {
      const res = await fetch(`${cluster.server}${paths.volumeAttachments}?limit=1`, { headers: { Authorization: `Bearer ${token.status.token}` }, tls: { ca: cluster.caPem } });
      await res.text();
      return res.ok;
    },
    { description: "the csi-attacher service account's bindings to take effect", timeoutMs: 30_000 },
  );

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

describe("deploy/rbac.yaml", () => {
  it("lets the csi-attacher service account take the Lease, attach, record failure events and detach, with nothing forbidden", async () => {
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
    await waitForCondition(
      async () => {
        const events = await admin.list("/api/v1/namespaces/default/events", { fieldSelector: "involvedObject.name=rbac,reason=AttachFailed" });
        return events.items.length === 1;
      },
      { description: "the AttachFailed event", timeoutMs: 30_000, watch: [attacher.process] },
    );

    await admin.delete(paths.volumeAttachment("rbac"));
    await admin.waitFor(paths.volumeAttachment("rbac"), (va) => va === null, 30_000);
    expect(attacher.log()).not.toMatch(/forbidden/i);
  });
});
