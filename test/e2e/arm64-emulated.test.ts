import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { AdminClient } from "../ground/admin-client";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import type { CallRecord } from "../ground/fake-csi-driver/control-protocol";
import { parseVersionLine } from "../../scripts/image/image-identity";
import { attacherBinary } from "../ground/attacher-process";
import { arm64, arm64Binary, arm64EmulationProblem, arm64Sysroot, arm64Wrapper } from "./support/arm64-emulation";
import { startFakeDriverSetup, stopFakeDriverSetup, type FakeDriverSetup } from "./support/fake-driver-ground";
import { paths, persistentVolume, volumeAttachment, type VolumeAttachmentJson } from "../ground/objects";
import { run } from "./support/sidecar-image";

/**
 * The arm64 binary (`bun run build -- --target=linux/arm64`, what the
 * image's linux/arm64 manifest holds) against the test ground, run under
 * QEMU's user-mode emulation on an amd64 machine. Emulation is slow and its
 * speed says nothing about an arm64 CPU: the timeouts are generous, the
 * volumes few, and every assertion is about behaviour.
 *
 * JavaScriptCore's JIT runs as it would on arm64 (no BUN_JSC_useJIT=0):
 * QEMU 7.2 translates the code JSC writes at run time as it does any other.
 * Checked with a cross-compiled hot loop over numbers, strings and objects:
 * the same result with the JIT on, with DFG/FTL off and with the JIT off
 * (about 2.5 s, 7.5 s and 28 s under QEMU: the tiers do run).
 */
const driverName = "arm64.fake.csi.test";
const node = "arm64-node";
/** Few volumes: each publish under emulation costs far more CPU than natively. */
const volumes = ["arm64-a", "arm64-b", "arm64-c"];
const emulatedTimeoutMs = 120_000;

let cluster: TestCluster;
let admin: AdminClient;
let sysroot: string;
let setup: FakeDriverSetup | undefined;

beforeAll(async () => {
  const problem = arm64EmulationProblem();
  if (problem !== undefined) throw new Error(problem);
  if (!existsSync(arm64Binary)) throw new Error(`${arm64Binary} is missing: run \`bun run build -- --target=linux/arm64\` first (bun run test does)`);
  sysroot = arm64Sysroot();
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
}, emulatedTimeoutMs);

afterAll(async () => {
  await stopFakeDriverSetup(setup);
  await cluster?.stop();
  if (sysroot !== undefined) rmSync(sysroot, { recursive: true, force: true });
});

function waitForVa(name: string, predicate: (va: VolumeAttachmentJson | null) => boolean): Promise<VolumeAttachmentJson | null> {
  return admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment(name), predicate, emulatedTimeoutMs);
}

describe("the arm64 binary under emulation", () => {
  it("says it is the linux/arm64 build of the same source as this machine's binary", () => {
    const emulated = parseVersionLine(run([...arm64Wrapper(sysroot), arm64Binary, "--version"]));
    const native = parseVersionLine(run([attacherBinary, "--version"]));
    expect(emulated).toEqual({ version: native.version, commit: native.commit, platform: arm64.platform });
  });

  it("attaches VolumeAttachments through the driver, then detaches them when they are deleted", async () => {
    setup = await startFakeDriverSetup(cluster, admin, {
      driverName,
      nodes: [node],
      attacherCommand: { binary: arm64Binary, wrapper: arm64Wrapper(sysroot), syncTimeoutMs: emulatedTimeoutMs },
    });
    const { driver, finalizer } = setup;
    for (const name of volumes) {
      await admin.create(paths.persistentVolumes, persistentVolume(`pv-${name}`, { driver: driverName, volumeHandle: `vol-${name}` }));
      await admin.create(paths.volumeAttachments, volumeAttachment(name, driverName, node, `pv-${name}`));
    }
    const attached = await Promise.all(volumes.map((name) => waitForVa(name, (va) => va?.status?.attached === true)));
    expect(attached.map((va) => ({ finalizers: va?.metadata.finalizers, status: va?.status }))).toEqual(
      volumes.map((name) => ({ finalizers: [finalizer], status: { attached: true, attachmentMetadata: { devicePath: `/dev/fake/vol-${name}` } } })),
    );

    for (const name of volumes) await admin.delete(paths.volumeAttachment(name));
    await Promise.all(volumes.map((name) => waitForVa(name, (va) => va === null)));
    const volumeIds = (calls: readonly CallRecord[]) =>
      calls
        .filter((call) => call.code === "OK")
        .map((call) => (call.request as { volumeId?: string; nodeId?: string }))
        .map((request) => `${request.volumeId} on ${request.nodeId}`)
        .sort();
    const expected = volumes.map((name) => `vol-${name} on ${node}-id`);
    expect({
      published: volumeIds(await driver.control.calls("ControllerPublishVolume")),
      unpublished: volumeIds(await driver.control.calls("ControllerUnpublishVolume")),
    }).toEqual({ published: expected, unpublished: expected });
  }, 2 * emulatedTimeoutMs);

  it("exits 0 on SIGTERM", async () => {
    const attacher = setup?.attacher;
    if (attacher === undefined) throw new Error("the attach test started no attacher");
    // SIGTERM goes to QEMU, which delivers it to the emulated process.
    process.kill(attacher.process.pid, "SIGTERM");
    expect(await attacher.process.exited).toBe(0);
    expect(attacher.log()).toContain('"Received signal, shutting down"');
  }, emulatedTimeoutMs);
});
