import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AdminClient } from "../ground/admin-client";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { launchFakeCsiDriver } from "../ground/fake-csi-driver/launch";
import { attacherBinary, startAttacher } from "../ground/attacher-process";
import { csiNode, paths, persistentVolume, volumeAttachment, type VolumeAttachmentJson } from "../ground/objects";

/** How the compiled attacher starts, chooses its handler, and ends. */
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
  return mkdtempSync(join(tmpdir(), `e2e-startup-${name}-`));
}

describe("start-up", () => {
  it("stops with one line naming the flag, the value and what is accepted when a flag is bad", async () => {
    const run = Bun.spawnSync([attacherBinary, "--worker-threads=0", "--csi-address=/nonexistent"]);
    expect({ code: run.exitCode, stderr: run.stderr.toString(), stdout: run.stdout.toString() }).toEqual({
      code: 1,
      stderr: 'invalid value "0" for flag --worker-threads: must be greater than zero\n',
      stdout: "",
    });
  });

  it("waits for the driver's socket to appear, then starts", async () => {
    const dir = scratchDir("late-socket");
    await using attacher = await startAttacher({ kubeconfig: cluster.kubeconfigPath, csiAddress: join(dir, "csi.sock"), logDir: dir }, false);
    await attacher.waitForLog(/"Still connecting" address="unix:\/\/.*csi.sock"/);
    await using _driver = await launchFakeCsiDriver({ directory: dir, config: { name: "late.fake.csi.test" } });
    await attacher.waitForLog(/"Caches synced"/);
  });

  it("runs with JavaScriptCore's DFG and FTL tiers and Bun's GC timer off, in the process it was started as, unless the environment names an option", async () => {
    const runtimeOptions = async (env: Record<string, string>) => {
      const dir = scratchDir("jit-tiers");
      // No socket: the attacher waits for it, long enough to read its environment.
      await using attacher = await startAttacher({ kubeconfig: cluster.kubeconfigPath, csiAddress: join(dir, "csi.sock"), logDir: dir, env }, false);
      await attacher.waitForLog(/"Still connecting"/);
      const environ = readFileSync(`/proc/${attacher.process.pid}/environ`, "utf8").split("\0");
      // Not the RAM size: where the test runs under a limit on an ancestor cgroup, BUN_JSC_forceRAMSize joins them (tight-memory-limit tests that).
      return environ.filter((entry) => /^(BUN_JSC_use(DFG|FTL)JIT|BUN_GC_TIMER_DISABLE)=/.test(entry)).sort();
    };
    expect(await runtimeOptions({})).toEqual(["BUN_GC_TIMER_DISABLE=1", "BUN_JSC_useDFGJIT=0", "BUN_JSC_useFTLJIT=0"]);
    // An operator's choice wins for the option it names; the others keep our default.
    expect(await runtimeOptions({ BUN_JSC_useDFGJIT: "1" })).toEqual(["BUN_GC_TIMER_DISABLE=1", "BUN_JSC_useDFGJIT=1", "BUN_JSC_useFTLJIT=0"]);
    expect(await runtimeOptions({ BUN_GC_TIMER_DISABLE: "0" })).toEqual(["BUN_GC_TIMER_DISABLE=0", "BUN_JSC_useDFGJIT=0", "BUN_JSC_useFTLJIT=0"]);
  });

  it("takes nothing from its working directory: a .env there sets no variable and a bunfig.toml there runs nothing", async () => {
    // A Bun binary reads both from where it starts unless it is built not to;
    // upstream's reads neither, and what the attacher runs with is its pod's.
    const dir = scratchDir("working-directory");
    writeFileSync(join(dir, ".env"), "CSI_ATTACHER_FROM_DOTENV=read\nBUN_JSC_useDFGJIT=1\n");
    const preloaded = join(dir, "preloaded");
    writeFileSync(join(dir, "preload.js"), `require("node:fs").writeFileSync(${JSON.stringify(preloaded)}, "ran");\n`);
    writeFileSync(join(dir, "bunfig.toml"), 'preload = ["./preload.js"]\n');
    // The log directory is the attacher's working directory. No socket: it waits for one, in the image its environment made.
    await using attacher = await startAttacher({ kubeconfig: cluster.kubeconfigPath, csiAddress: join(dir, "csi.sock"), logDir: dir }, false);
    await attacher.waitForLog(/"Still connecting"/);
    const environ = readFileSync(`/proc/${attacher.process.pid}/environ`, "utf8").split("\0");
    expect(environ.filter((entry) => /^(CSI_ATTACHER_FROM_DOTENV|BUN_JSC_useDFGJIT)=/.test(entry))).toEqual(["BUN_JSC_useDFGJIT=0"]);
    expect(existsSync(preloaded)).toBe(false);
  });

  it("probes until the driver says it is ready", async () => {
    const dir = scratchDir("not-ready");
    await using driver = await launchFakeCsiDriver({ directory: dir, config: { name: "slow-start.fake.csi.test" } });
    await driver.control.script("Probe", [{ response: { ready: false }, times: 2 }]);
    await using attacher = await startAttacher({ kubeconfig: cluster.kubeconfigPath, csiAddress: driver.csiSocket, logDir: dir }, false);
    await attacher.waitForLog(/"Caches synced"/);
    expect(attacher.log().match(/"CSI driver is not ready"/g)?.length).toBe(2);
    expect((await driver.control.calls("Probe")).length).toBe(3);
  });

  it("exits non-zero when Probe fails with anything but DeadlineExceeded", async () => {
    const dir = scratchDir("probe-fails");
    await using driver = await launchFakeCsiDriver({ directory: dir, config: { name: "broken.fake.csi.test" } });
    await driver.control.script("Probe", [{ code: "FailedPrecondition", message: "backend not configured", always: true }]);
    await using attacher = await startAttacher({ kubeconfig: cluster.kubeconfigPath, csiAddress: driver.csiSocket, logDir: dir }, false);
    expect(await attacher.process.exited).toBe(1);
    expect(attacher.log()).toContain("CSI driver probe failed: rpc error: code = FailedPrecondition desc = backend not configured");
  });

  it("exits non-zero when GetPluginInfo fails, without retrying it", async () => {
    const dir = scratchDir("info-fails");
    await using driver = await launchFakeCsiDriver({ directory: dir, config: { name: "noinfo.fake.csi.test" } });
    await driver.control.script("GetPluginInfo", [{ code: "Internal", message: "no name", always: true }]);
    await using attacher = await startAttacher({ kubeconfig: cluster.kubeconfigPath, csiAddress: driver.csiSocket, logDir: dir }, false);
    expect(await attacher.process.exited).toBe(1);
    expect(attacher.log()).toContain("failed to get the CSI driver name: rpc error: code = Internal desc = no name");
    expect((await driver.control.calls("GetPluginInfo")).length).toBe(1);
  });
});

describe("handler choice", () => {
  it("marks VAs attached without finalizers or driver calls when the driver cannot ControllerPublish (trivial handler)", async () => {
    const dir = scratchDir("trivial");
    const driverName = "trivial.fake.csi.test";
    await using driver = await launchFakeCsiDriver({ directory: dir, config: { name: driverName, controllerCapabilities: ["CREATE_DELETE_VOLUME"] } });
    await using _attacher = await startAttacher({ kubeconfig: cluster.kubeconfigPath, csiAddress: driver.csiSocket, logDir: dir });
    await admin.create(paths.persistentVolumes, persistentVolume("pv-trivial", { driver: driverName, volumeHandle: "vol-trivial" }));
    await admin.create(paths.volumeAttachments, volumeAttachment("va-trivial", driverName, "trivial-node", "pv-trivial"));
    const attached = await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("va-trivial"), (va) => va?.status?.attached === true);
    expect({ finalizers: attached?.metadata.finalizers, annotations: attached?.metadata.annotations, status: attached?.status }).toEqual({
      finalizers: undefined,
      annotations: undefined,
      status: { attached: true },
    });
    expect(await driver.control.calls("ControllerPublishVolume")).toEqual([]);
    // Nothing to detach: deletion is immediate.
    await admin.delete(paths.volumeAttachment("va-trivial"));
    await admin.waitFor(paths.volumeAttachment("va-trivial"), (va) => va === null);
  });
});

describe("losing the driver", () => {
  it("exits 1 with 'Lost connection to CSI driver' when the driver dies, so that the pod restarts", async () => {
    const dir = scratchDir("driver-dies");
    const driverName = "mortal.fake.csi.test";
    await using driver = await launchFakeCsiDriver({ directory: dir, config: { name: driverName } });
    await admin.create(paths.csiNodes, csiNode("mortal-node", [{ name: driverName, nodeID: "mortal-node-id" }]));
    await using attacher = await startAttacher({ kubeconfig: cluster.kubeconfigPath, csiAddress: driver.csiSocket, logDir: dir });
    // Attach once so that a connection to the driver is open.
    await admin.create(paths.persistentVolumes, persistentVolume("pv-mortal", { driver: driverName, volumeHandle: "vol-mortal" }));
    await admin.create(paths.volumeAttachments, volumeAttachment("va-mortal", driverName, "mortal-node", "pv-mortal"));
    await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("va-mortal"), (va) => va?.status?.attached === true);
    await driver.kill();
    expect(await attacher.process.exited).toBe(1);
    expect(attacher.log()).toMatch(/^E.*"Lost connection to CSI driver, exiting"/m);
  });
});
