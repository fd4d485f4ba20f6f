import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AdminClient } from "../ground/admin-client";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { launchFakeCsiDriver } from "../ground/fake-csi-driver/launch";
import { startAttacher } from "../ground/attacher-process";
import { csiNode, paths, persistentVolume, volumeAttachment, type VolumeAttachmentJson } from "../ground/objects";

/** How the compiled attacher ends: on a signal, and when its driver goes away. */
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
  return mkdtempSync(join(tmpdir(), `e2e-lifecycle-${name}-`));
}

async function createAttachment(driverName: string, node: string, name: string): Promise<void> {
  await admin.create(paths.persistentVolumes, persistentVolume(`pv-${name}`, { driver: driverName, volumeHandle: `vol-${name}` }));
  await admin.create(paths.volumeAttachments, volumeAttachment(name, driverName, node, `pv-${name}`));
}

describe("signals", () => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    // That nothing new starts after the signal is shown in test/unit/controller/shutdown.test.ts.
    it(`on ${signal}, finishes the publish in flight and records it on the VA before exiting 0`, async () => {
      const dir = scratchDir(signal);
      const driverName = `${signal.toLowerCase()}.fake.csi.test`;
      const node = `${signal.toLowerCase()}-node`;
      const name = `in-flight-${signal.toLowerCase()}`;
      await using driver = await launchFakeCsiDriver({ directory: dir, config: { name: driverName } });
      await admin.create(paths.csiNodes, csiNode(node, [{ name: driverName, nodeID: `${node}-id` }]));
      // A long --timeout: the held publish must outlive the signal without timing out.
      await using attacher = await startAttacher({ kubeconfig: cluster.kubeconfigPath, csiAddress: driver.csiSocket, logDir: dir, args: ["--timeout=2m"] });
      await driver.control.script("ControllerPublishVolume", [{ hang: true, volumeId: `vol-${name}` }]);
      await createAttachment(driverName, node, name);
      await driver.control.waitForHung("ControllerPublishVolume", 1, { timeoutMs: 30_000 });

      process.kill(attacher.process.pid, signal);
      await attacher.waitForLog(/"Received signal, shutting down"/);
      expect(attacher.process.running).toBe(true);
      await driver.control.release("ControllerPublishVolume");

      expect(await attacher.process.exited).toBe(0);
      const inFlight = await admin.get<VolumeAttachmentJson>(paths.volumeAttachment(name));
      expect(inFlight.status).toEqual({ attached: true, attachmentMetadata: { devicePath: `/dev/fake/vol-${name}` } });
      expect((await driver.control.calls("ControllerPublishVolume")).map((call) => call.code)).toEqual(["OK"]);
    });
  }
});

/**
 * withDriverAndAttacher starts a fake driver and an attacher on it with the
 * termination log a kubelet would mount (the kubelet creates the file; the
 * attacher only writes into it), all named after `name`. Dispose to stop both.
 */
async function withDriverAndAttacher(name: string, args: readonly string[] = []) {
  const dir = scratchDir(name);
  const driverName = `${name}.fake.csi.test`;
  const node = `${name}-node`;
  const terminationLog = join(dir, "termination-log");
  writeFileSync(terminationLog, "");
  const driver = await launchFakeCsiDriver({ directory: dir, config: { name: driverName } });
  try {
    await admin.create(paths.csiNodes, csiNode(node, [{ name: driverName, nodeID: `${node}-id` }]));
    const attacher = await startAttacher({ kubeconfig: cluster.kubeconfigPath, csiAddress: driver.csiSocket, logDir: dir, args: [...args], env: { CSI_ATTACHER_TERMINATION_LOG: terminationLog } });
    return {
      driver,
      attacher,
      driverName,
      node,
      terminationLog,
      /** attachOnce attaches one volume, so that a connection to the driver is open. */
      async attachOnce(): Promise<void> {
        await createAttachment(driverName, node, name);
        await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment(name), (va) => va?.status?.attached === true);
      },
      async [Symbol.asyncDispose](): Promise<void> {
        await attacher[Symbol.asyncDispose]();
        await driver[Symbol.asyncDispose]();
      },
    };
  } catch (e: unknown) {
    await driver[Symbol.asyncDispose]();
    throw e;
  }
}

describe("the driver stopping with the pod", () => {
  // Deleting a pod, the kubelet signals the attacher and its driver together;
  // on a real node the driver was often gone first (issue 27, point 6).
  it("on SIGTERM, takes the driver going away during the drain as part of the shutdown: the call in flight fails, exit 0, no 'Lost connection'", async () => {
    // A long --timeout: the held publish must outlive the signal without timing out.
    await using ground = await withDriverAndAttacher("drain-stop", ["--timeout=2m"]);
    const { driver, attacher } = ground;
    const name = "drain-stop-in-flight";
    await driver.control.script("ControllerPublishVolume", [{ hang: true, volumeId: `vol-${name}` }]);
    await createAttachment(ground.driverName, ground.node, name);
    await driver.control.waitForHung("ControllerPublishVolume", 1, { timeoutMs: 30_000 });

    process.kill(attacher.process.pid, "SIGTERM");
    await attacher.waitForLog(/"Received signal, shutting down"/);
    await driver.kill();

    expect(await attacher.process.exited).toBe(0);
    expect(attacher.log()).toMatch(/^I.*"CSI driver went away while shutting down"/m);
    expect(attacher.log()).not.toContain("Lost connection to CSI driver");
    expect(readFileSync(ground.terminationLog, "utf8")).toBe("");
    // The publish never answered: nothing claims the volume is attached.
    expect((await admin.get<VolumeAttachmentJson>(paths.volumeAttachment(name))).status?.attached).not.toBe(true);
  });

  it("takes a driver gone just before the SIGTERM (within the signals' spread) as part of the shutdown too", async () => {
    await using ground = await withDriverAndAttacher("stops-first");
    await ground.attachOnce();
    await ground.driver.kill();
    // The loss is seen first; the signal follows, as the kubelet's to the attacher can.
    await ground.attacher.waitForLog(/"CSI driver connection lost, waiting for a stop signal that may come with it"/);
    process.kill(ground.attacher.process.pid, "SIGTERM");

    expect(await ground.attacher.process.exited).toBe(0);
    expect(ground.attacher.log()).not.toContain("Lost connection to CSI driver");
    expect(readFileSync(ground.terminationLog, "utf8")).toBe("");
  });
});

describe("losing the driver", () => {
  it("writes 'Lost connection to CSI driver, exiting' to the termination log and exits 1", async () => {
    await using ground = await withDriverAndAttacher("terminated");
    await ground.attachOnce();
    await ground.driver.kill();
    expect(await ground.attacher.process.exited).toBe(1);
    expect(readFileSync(ground.terminationLog, "utf8")).toBe("Lost connection to CSI driver, exiting\n");
  });

  it("with a --timeout under 5 s as well: the drain's deadline does not cut short the wait for a stop signal that may come with the loss", async () => {
    await using ground = await withDriverAndAttacher("short-timeout", ["--timeout=1s"]);
    await ground.attachOnce();
    await ground.driver.kill();
    expect(await ground.attacher.process.exited).toBe(1);
    expect(ground.attacher.log()).not.toContain("In-flight operations did not finish in time");
    expect(readFileSync(ground.terminationLog, "utf8")).toBe("Lost connection to CSI driver, exiting\n");
  });

  it("exits 1 as well when a restarted driver already listens on the socket when the old one goes, so that the dial after the close reaches the new one", async () => {
    await using ground = await withDriverAndAttacher("replaced");
    await ground.attachOnce();
    // A new driver's socket takes the path while the old one still runs, as a restart faster than the attacher's dial
    // (moved there: bound on the path itself, its control socket too would share the old one's path and pooled connection).
    await using successor = await launchFakeCsiDriver({ config: { name: ground.driverName } });
    renameSync(successor.csiSocket, ground.driver.csiSocket);
    await ground.driver.kill();
    expect(await ground.attacher.process.exited).toBe(1);
    expect(ground.attacher.log()).toMatch(/^E.*"Lost connection to CSI driver, exiting".*reason="the driver's socket .*csi\.sock is a new file: another driver listens there"/m);
    expect(readFileSync(ground.terminationLog, "utf8")).toBe("Lost connection to CSI driver, exiting\n");
  });
});

describe("client-side API rate limit", () => {
  it("attaches and detaches with --kube-api-qps=1 --kube-api-burst=1", async () => {
    const dir = scratchDir("low-qps");
    const driverName = "low-qps.fake.csi.test";
    const node = "low-qps-node";
    await using driver = await launchFakeCsiDriver({ directory: dir, config: { name: driverName } });
    await admin.create(paths.csiNodes, csiNode(node, [{ name: driverName, nodeID: `${node}-id` }]));
    await using _attacher = await startAttacher({ kubeconfig: cluster.kubeconfigPath, csiAddress: driver.csiSocket, logDir: dir, args: ["--kube-api-qps=1", "--kube-api-burst=1"] });
    await createAttachment(driverName, node, "low-qps");
    const attached = await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("low-qps"), (va) => va?.status?.attached === true, 60_000);
    expect(attached?.metadata.finalizers).toEqual(["external-attacher/low-qps-fake-csi-test"]);
    await admin.delete(paths.volumeAttachment("low-qps"));
    await admin.waitFor(paths.volumeAttachment("low-qps"), (va) => va === null, 60_000);
    expect((await driver.control.calls("ControllerUnpublishVolume")).map((call) => call.code)).toEqual(["OK"]);
  });
});
