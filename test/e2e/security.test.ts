import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AdminClient, type KubeObject } from "../ground/admin-client";
import { freeLoopbackPorts } from "../ground/free-ports";
import { waitForCondition } from "../ground/managed-process";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { launchFakeCsiDriver, type FakeCsiDriver } from "../ground/fake-csi-driver/launch";
import { startAttacher, type AttacherProcess } from "../ground/attacher-process";
import { csiNode, paths, persistentVolume, volumeAttachment, type VolumeAttachmentJson, hasSettledAttachError } from "../ground/objects";
import { callsFor } from "./support/rule-objects";
import { selfSignedLoopbackCertificate } from "./support/self-signed-certificate";

/**
 * What the attacher must never give away: Secret values (not at -v=10, not
 * in a VA's errors, Events or metrics), or trust in an API server it cannot
 * verify. (No listening port without --http-endpoint: http-endpoint.test.ts.)
 */
let cluster: TestCluster;
let admin: AdminClient;
let driver: FakeCsiDriver;
let attacher: AttacherProcess;
let dir: string;
const driverName = "secure.fake.csi.test";
const node = "secure-node";
/** Values that must never leave the Secret, each distinctive enough to grep for. */
const secretValues = { password: "pw-Zq8!never-logged-7731", token: "tok-Kx2-never-logged-5519" };
/** The forms a value could leak in: as is, and as the API's base64. */
const leakForms = Object.values(secretValues).flatMap((value) => [value, Buffer.from(value).toString("base64")]);
/** The port --http-endpoint serves /metrics on. */
let httpPort: number;

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  dir = mkdtempSync(join(tmpdir(), "e2e-security-"));
  await admin.create(paths.secrets("default"), {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "publish-creds", namespace: "default" },
    data: Object.fromEntries(Object.entries(secretValues).map(([key, value]) => [key, Buffer.from(value).toString("base64")])),
  });
  await admin.create(paths.csiNodes, csiNode(node, [{ name: driverName, nodeID: `${node}-id` }]));
  driver = await launchFakeCsiDriver({ directory: dir, config: { name: driverName } });
  ({ apiserver: httpPort } = await freeLoopbackPorts(["apiserver"]));
  attacher = await startAttacher({
    kubeconfig: cluster.kubeconfigPath,
    csiAddress: driver.csiSocket,
    logDir: dir,
    // -v=10 comes after startAttacher's -v=4, so it wins.
    args: ["-v=10", "--timeout=2s", "--retry-interval-start=100ms", "--retry-interval-max=1s", `--http-endpoint=127.0.0.1:${httpPort}`],
  });
});

afterAll(async () => {
  await attacher?.[Symbol.asyncDispose]();
  await driver?.[Symbol.asyncDispose]();
  await cluster?.stop();
});

const secretRef = { name: "publish-creds", namespace: "default" };

function leaksIn(text: string): string[] {
  return leakForms.filter((form) => text.includes(form));
}

describe("Secrets at -v=10", () => {
  it("sends the Secret to the driver on attach, detach and a failing attach, and never shows it in logs, VA errors or Events", async () => {
    await admin.create(paths.persistentVolumes, persistentVolume("pv-creds", { driver: driverName, volumeHandle: "vol-creds", controllerPublishSecretRef: secretRef }));
    await admin.create(paths.volumeAttachments, volumeAttachment("va-creds", driverName, node, "pv-creds"));
    await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("va-creds"), (va) => va?.status?.attached === true);
    await admin.delete(paths.volumeAttachment("va-creds"));
    await admin.waitFor(paths.volumeAttachment("va-creds"), (va) => va === null);

    // The failing attach keeps its error on the VA, where operators (and leaks) would look.
    await driver.control.script("ControllerPublishVolume", [{ code: "PermissionDenied", message: "credentials refused", always: true, volumeId: "vol-refused" }]);
    await admin.create(paths.persistentVolumes, persistentVolume("pv-refused", { driver: driverName, volumeHandle: "vol-refused", controllerPublishSecretRef: secretRef }));
    await admin.create(paths.volumeAttachments, volumeAttachment("va-refused", driverName, node, "pv-refused"));
    const refused = await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("va-refused"), hasSettledAttachError);
    await attacher.waitForLog(/"Error processing" queue="csi-attacher-va" name="va-refused"/);

    // The Secret was really used: otherwise finding nothing would prove nothing.
    const sent = [
      ...(await callsFor(driver, "ControllerPublishVolume", "vol-creds")),
      ...(await callsFor(driver, "ControllerUnpublishVolume", "vol-creds")),
      ...(await callsFor(driver, "ControllerPublishVolume", "vol-refused")),
    ].map((call) => (call.request as { secrets?: unknown }).secrets);
    expect(sent.slice(0, 3)).toEqual([secretValues, secretValues, secretValues]);
    // -v=10 really logged the gRPC payloads whose secrets it had to strip.
    expect(attacher.log()).toContain("***stripped***");

    const allEvents = async () => [...(await admin.list("/api/v1/events")).items, ...(await admin.list("/apis/events.k8s.io/v1/events")).items];
    // The failing attach is recorded as an Event (asynchronously): wait for it, so the Events checked are ones that could leak.
    await waitForCondition(async () => JSON.stringify(await allEvents()).includes("credentials refused"), { description: "the AttachFailed event", timeoutMs: 30_000 });
    const events = await allEvents();
    const vas = (await admin.list<KubeObject>(paths.volumeAttachments)).items;
    expect({
      stderr: leaksIn(attacher.log()),
      stdout: leaksIn(readFileSync(attacher.process.stdoutPath, "utf8")),
      attachError: leaksIn(JSON.stringify(refused?.status)),
      volumeAttachments: leaksIn(JSON.stringify(vas)),
      events: leaksIn(JSON.stringify(events)),
    }).toEqual({ stderr: [], stdout: [], attachError: [], volumeAttachments: [], events: [] });
    expect(refused?.status?.attachError?.message).toBe("rpc error: code = PermissionDenied desc = credentials refused");
  });

  it("never shows the Secret in /metrics", async () => {
    const res = await fetch(`http://127.0.0.1:${httpPort}/metrics`);
    const body = await res.text();
    expect({ status: res.status, hasOperations: body.includes("csi_sidecar_operations_seconds"), leaks: leaksIn(body) }).toEqual({
      status: 200,
      hasOperations: true,
      leaks: [],
    });
  });
});

describe("TLS to the API server", () => {
  /** A kubeconfig for the real apiserver with the cluster section given. */
  function kubeconfigWith(name: string, clusterFields: Record<string, unknown>): string {
    const path = join(dir, name);
    writeFileSync(
      path,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "e2e", cluster: { server: cluster.server, ...clusterFields } }],
        users: [{ name: "admin", user: { token: cluster.adminToken } }],
        contexts: [{ name: "e2e", context: { cluster: "e2e", user: "admin" } }],
        "current-context": "e2e",
      }),
      { mode: 0o600 },
    );
    return path;
  }

  it("refuses an API server whose certificate the kubeconfig's CA did not sign, saying so, and never syncs", async () => {
    const wrongCa = selfSignedLoopbackCertificate().cert;
    const logDir = mkdtempSync(join(tmpdir(), "e2e-security-wrong-ca-"));
    const kubeconfig = kubeconfigWith("wrong-ca.kubeconfig", { "certificate-authority-data": Buffer.from(wrongCa).toString("base64") });
    await using distrustful = await startAttacher({ kubeconfig, csiAddress: driver.csiSocket, logDir, name: "wrong-ca" }, false);
    await distrustful.waitForLog(/"List\/watch failed, backing off" kind="CSINode" err="GET \/apis\/storage\.k8s\.io\/v1\/csinodes\?limit=500: [^"]*certificate/);
    expect(distrustful.log()).not.toContain('"Caches synced"');
    expect(distrustful.process.running).toBe(true);
  });

  it("accepts the API server's certificate unchecked only when the kubeconfig says insecure-skip-tls-verify", async () => {
    const logDir = mkdtempSync(join(tmpdir(), "e2e-security-insecure-"));
    const kubeconfig = kubeconfigWith("insecure.kubeconfig", { "insecure-skip-tls-verify": true });
    await using trusting = await startAttacher({ kubeconfig, csiAddress: driver.csiSocket, logDir, name: "insecure" });
    expect(trusting.log()).toContain('"Caches synced"');
  });
});
