import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AdminClient } from "../ground/admin-client";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { launchFakeCsiDriver } from "../ground/fake-csi-driver/launch";
import { attacherBinary, startAttacher } from "../ground/attacher-process";
import { CorruptingProxy } from "./support/corrupting-proxy";
import { csiNode, paths, persistentVolume, volumeAttachment, type VolumeAttachmentJson } from "../ground/objects";
import { callsFor } from "./support/rule-objects";

/**
 * Bad input to the process rather than to its objects: kubeconfigs it
 * cannot use, a --csi-address that is no socket, a driver that drops the
 * connection under a call, an API server (or what stands between) that
 * answers garbage or cuts a watch mid-event. Each gets one clear log line,
 * and where the fault is passing the attacher carries on.
 * Malformed flags are covered by startup.test.ts and the flags' unit tests.
 */
let cluster: TestCluster;
let admin: AdminClient;

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
});

afterAll(async () => {
  await cluster?.stop();
});

function scratchDir(name: string): string {
  return mkdtempSync(join(tmpdir(), `e2e-bad-startup-${name}-`));
}

/** The last line the attacher wrote to stderr, its klog header cut off. */
function lastLogLine(stderr: string): string {
  const lines = stderr.trimEnd().split("\n");
  return (lines[lines.length - 1] ?? "").replace(/^[IWEF]\d{4} [\d:.]+\s+\d+ [^\]]+\] /, "");
}

describe("kubeconfigs it cannot use", () => {
  const dir = scratchDir("kubeconfig");
  const missing = join(dir, "missing.yaml");
  const directory = join(dir, "a-directory");
  mkdirSync(directory);
  const malformed = join(dir, "malformed.yaml");
  writeFileSync(malformed, "apiVersion: v1\nkind: Config\nclusters: [\n  - {{{\n");
  const noCluster = join(dir, "no-cluster.json");
  writeFileSync(noCluster, JSON.stringify({ apiVersion: "v1", kind: "Config", clusters: [], users: [], contexts: [], "current-context": "" }));

  const rows = [
    { what: "a file that does not exist", path: missing, err: `error loading config file \\"${missing}\\": ENOENT: no such file or directory, open '${missing}'` },
    { what: "a directory", path: directory, err: `error loading config file \\"${directory}\\": EISDIR: illegal operation on a directory, read` },
    { what: "malformed YAML", path: malformed, err: `error loading config file \\"${malformed}\\": missed comma between flow collection entries (4:3)` },
    { what: "no current cluster", path: noCluster, err: `kubeconfig ${noCluster} has no current cluster` },
  ];
  for (const row of rows) {
    it(`exits 1 with one line naming the file when the kubeconfig is ${row.what}`, () => {
      const run = Bun.spawnSync([attacherBinary, `--kubeconfig=${row.path}`, "--csi-address=/nonexistent/csi.sock"]);
      expect({ code: run.exitCode, line: lastLogLine(run.stderr.toString()) }).toEqual({
        code: 1,
        line: `"Failed to build a Kubernetes config" err="${row.err}"`,
      });
    });
  }
});

describe("a --csi-address that is not a socket", () => {
  it("keeps waiting for the driver as upstream does, saying the path is not a socket", async () => {
    const dir = scratchDir("not-a-socket");
    const path = join(dir, "csi.sock");
    writeFileSync(path, "a regular file\n");
    await using attacher = await startAttacher({ kubeconfig: cluster.kubeconfigPath, csiAddress: path, logDir: dir }, false);
    await attacher.waitForLog(new RegExp(`"Still connecting" address="unix://${path}" reason="${path} exists but is not a socket"`));
    expect(attacher.process.running).toBe(true);
  });
});

describe("a driver that closes the connection mid-call", () => {
  it("fails the call at once as Unavailable instead of waiting out --timeout, and attaches on the retry", async () => {
    const dir = scratchDir("disconnect");
    const driverName = "disconnect.fake.csi.test";
    await using driver = await launchFakeCsiDriver({ directory: dir, config: { name: driverName } });
    await admin.create(paths.csiNodes, csiNode("disconnect-node", [{ name: driverName, nodeID: "disconnect-node-id" }]));
    // A --timeout far past the test's patience: only a prompt failure lets the retry attach in time.
    await using attacher = await startAttacher({ kubeconfig: cluster.kubeconfigPath, csiAddress: driver.csiSocket, logDir: dir, args: ["--timeout=10m", "--retry-interval-start=100ms"] });
    await driver.control.script("ControllerPublishVolume", [{ delayMs: 100, disconnect: true, volumeId: "vol-cut" }]);
    await admin.create(paths.persistentVolumes, persistentVolume("pv-cut", { driver: driverName, volumeHandle: "vol-cut" }));
    await admin.create(paths.volumeAttachments, volumeAttachment("va-cut", driverName, "disconnect-node", "pv-cut"));

    const attached = await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("va-cut"), (va) => va?.status?.attached === true, 60_000);
    expect(attached?.status).toEqual({ attached: true, attachmentMetadata: { devicePath: "/dev/fake/vol-cut" } });
    expect((await callsFor(driver, "ControllerPublishVolume", "vol-cut")).map((call) => call.code)).toEqual(["Unavailable", "OK"]);
    expect(attacher.log()).toContain(
      '"Error processing" queue="csi-attacher-va" name="va-cut" err="rpc error: code = Unavailable desc = connection to the CSI driver closed during the call"',
    );
    // The driver is alive: losing one connection is not losing the driver.
    expect(attacher.process.running).toBe(true);
  });
});

describe("an API server answering what the attacher cannot read", () => {
  it("logs one line naming the request for a watch-list and for the paged list it falls back to, each answered with garbage, and syncs on the next try", async () => {
    const dir = scratchDir("garbage");
    const driverName = "garbage.fake.csi.test";
    await using proxy = new CorruptingProxy(cluster);
    proxy.arm({ kind: "garbage", match: /^\/api\/v1\/persistentvolumes\?.*sendInitialEvents=true/ });
    proxy.arm({ kind: "garbage", match: /^\/api\/v1\/persistentvolumes\?limit=/ });
    await using driver = await launchFakeCsiDriver({ directory: dir, config: { name: driverName } });
    await using attacher = await startAttacher({ kubeconfig: proxy.kubeconfig(dir), csiAddress: driver.csiSocket, logDir: dir }, false);
    await attacher.waitForLog(/"Caches synced"/, 60_000);
    expect(proxy.applied).toEqual([expect.stringMatching(/^garbage for \/api\/v1\/persistentvolumes\?watch=true&.*sendInitialEvents=true/), "garbage for /api/v1/persistentvolumes?limit=500"]);
    const log = attacher.log();
    expect(log).toMatch(
      /"The watch-list request failed, falling back to a paged list" kind="PersistentVolume" err="watch \/api\/v1\/persistentvolumes\?watch=true&[^ ]*: stream ended in the middle of an event: <html><body>502 Bad Gateway<\/body><\/html>"/,
    );
    expect(log).toContain(
      `"List/watch failed, backing off" kind="PersistentVolume" err="GET /api/v1/persistentvolumes?limit=500: answer is not JSON (JSON Parse error: Unrecognized token '<')"`,
    );
  });

  it("logs one line for a watch cut in the middle of an event, watches again from the last whole one, and attaches the VA whose event was cut", async () => {
    const dir = scratchDir("half-frame");
    const driverName = "halfframe.fake.csi.test";
    await using proxy = new CorruptingProxy(cluster);
    await using driver = await launchFakeCsiDriver({ directory: dir, config: { name: driverName } });
    await admin.create(paths.csiNodes, csiNode("half-frame-node", [{ name: driverName, nodeID: "half-frame-node-id" }]));
    await using attacher = await startAttacher({ kubeconfig: proxy.kubeconfig(dir), csiAddress: driver.csiSocket, logDir: dir });
    await admin.create(paths.persistentVolumes, persistentVolume("pv-half", { driver: driverName, volumeHandle: "vol-half" }));
    proxy.arm({ kind: "half-frame", match: /^\/apis\/storage\.k8s\.io\/v1\/volumeattachments\?.*watch=true/ });
    await admin.create(paths.volumeAttachments, volumeAttachment("va-half", driverName, "half-frame-node", "pv-half"));

    await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("va-half"), (va) => va?.status?.attached === true, 60_000);
    expect(proxy.applied).toHaveLength(1);
    expect(attacher.log()).toMatch(
      /"List\/watch failed, backing off" kind="VolumeAttachment" err="watch \/apis\/storage\.k8s\.io\/v1\/volumeattachments\?[^ ]*: stream ended in the middle of an event: {\\"type\\":\\"ADDED\\",\\"object\\":{\\"kind\\":\\"VolumeAttachment\\"/,
    );
    // Not relisted: the watch resumed from the last whole event's resourceVersion.
    expect(attacher.log()).not.toContain('"Watch expired, relisting"');
    expect(attacher.process.running).toBe(true);
  });
});
