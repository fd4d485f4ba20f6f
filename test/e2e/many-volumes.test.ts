import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { AdminClient } from "../ground/admin-client";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import type { CallRecord } from "../ground/fake-csi-driver/control-protocol";
import { startFakeDriverSetup, stopFakeDriverSetup, type FakeDriverSetup } from "./support/fake-driver-ground";
import { paths, persistentVolume, volumeAttachment, type VolumeAttachmentJson } from "../ground/objects";

const volumeCount = 100;
const nodes = ["node-a", "node-b", "node-c", "node-d"];

let cluster: TestCluster;
let admin: AdminClient;
let setup: FakeDriverSetup;

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  setup = await startFakeDriverSetup(cluster, admin, { driverName: "many.fake.csi.test", nodes });
});

afterAll(async () => {
  await stopFakeDriverSetup(setup);
  await cluster?.stop();
});

const names = Array.from({ length: volumeCount }, (_, i) => `many-${String(i).padStart(3, "0")}`);

async function allVolumeAttachments(): Promise<VolumeAttachmentJson[]> {
  const list = await admin.list<VolumeAttachmentJson>(paths.volumeAttachments);
  return list.items.filter((va) => va.spec.attacher === setup.driverName);
}

/** Successful calls per volume ID, keys sorted so that a failure's diff shows only the odd ones. */
function okCallsPerVolume(calls: readonly CallRecord[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const call of calls) {
    if (call.code !== "OK") continue;
    const volumeId = (call.request as { volumeId?: string }).volumeId ?? "";
    counts[volumeId] = (counts[volumeId] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}

describe(`${volumeCount} volumes through the compiled attacher`, () => {
  it("publishes each VA exactly once and unpublishes it exactly once", async () => {
    await Promise.all(
      names.map(async (name, i) => {
        await admin.create(paths.persistentVolumes, persistentVolume(`pv-${name}`, { driver: setup.driverName, volumeHandle: `vol-${name}` }));
        await admin.create(paths.volumeAttachments, volumeAttachment(name, setup.driverName, nodes[i % nodes.length] ?? "node-a", `pv-${name}`));
      }),
    );
    const deadline = Date.now() + 60_000;
    let attached: VolumeAttachmentJson[] = [];
    while (Date.now() < deadline) {
      attached = (await allVolumeAttachments()).filter((va) => va.status?.attached === true);
      if (attached.length === volumeCount) break;
      await Bun.sleep(100);
    }
    expect(attached.length).toBe(volumeCount);
    for (const va of attached) {
      const index = names.indexOf(va.metadata.name);
      expect({ name: va.metadata.name, metadata: va.status?.attachmentMetadata, nodeId: va.metadata.annotations?.["csi.alpha.kubernetes.io/node-id"] }).toEqual({
        name: va.metadata.name,
        metadata: { devicePath: `/dev/fake/vol-${va.metadata.name}` },
        nodeId: `${nodes[index % nodes.length]}-id`,
      });
    }

    await Promise.all(names.map((name) => admin.delete(paths.volumeAttachment(name))));
    while (Date.now() < deadline + 60_000 && (await allVolumeAttachments()).length > 0) await Bun.sleep(100);
    expect(await allVolumeAttachments()).toEqual([]);

    const everyVolumeOnce = Object.fromEntries(names.map((name) => [`vol-${name}`, 1]));
    expect(okCallsPerVolume(await setup.driver.control.calls("ControllerPublishVolume"))).toEqual(everyVolumeOnce);
    expect(okCallsPerVolume(await setup.driver.control.calls("ControllerUnpublishVolume"))).toEqual(everyVolumeOnce);
    // The driver knows every volume and has it published on no node.
    expect(await setup.driver.control.published()).toEqual(Object.fromEntries(names.map((name) => [`vol-${name}`, []])));
  });
});
