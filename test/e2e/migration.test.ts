import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { AdminClient } from "../ground/admin-client";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { startFakeDriverSetup, stopFakeDriverSetup, type FakeDriverSetup } from "./support/fake-driver-ground";
import { paths, volumeAttachment, type PersistentVolumeJson, type VolumeAttachmentJson, hasSettledAttachError } from "../ground/objects";

/**
 * CSI migration end to end: in-tree GCE PD PVs, as clusters created before
 * migration still have them, attached and detached through the GCE PD CSI
 * driver's name with the requests csi-translation-lib's translation yields.
 */
let cluster: TestCluster;
let admin: AdminClient;
let setup: FakeDriverSetup;
const driverName = "pd.csi.storage.gke.io";
const node = "migration-node";

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  setup = await startFakeDriverSetup(cluster, admin, {
    driverName,
    nodes: [node],
    attacherArgs: ["--retry-interval-start=100ms", "--retry-interval-max=1s"],
  });
});

afterAll(async () => {
  await stopFakeDriverSetup(setup);
  await cluster?.stop();
});

/** An in-tree GCE PD PV as the in-tree provisioner wrote them: the zone in a label, migrated-to set by the PV controller. */
function gcePdPersistentVolume(name: string, pdName: string, zones: string, accessModes: readonly string[]) {
  return {
    apiVersion: "v1",
    kind: "PersistentVolume",
    metadata: {
      name,
      labels: { "topology.kubernetes.io/zone": zones },
      annotations: { "pv.kubernetes.io/migrated-to": driverName },
    },
    spec: {
      capacity: { storage: "1Gi" },
      accessModes,
      persistentVolumeReclaimPolicy: "Retain",
      gcePersistentDisk: { pdName, fsType: "ext4" },
    },
  };
}

function waitForVa(name: string, predicate: (va: VolumeAttachmentJson | null) => boolean): Promise<VolumeAttachmentJson | null> {
  return admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment(name), predicate, 60_000);
}

async function callsFor(method: "ControllerPublishVolume" | "ControllerUnpublishVolume", volumeId: string) {
  return (await setup.driver.control.calls(method)).filter((call) => (call.request as { volumeId?: string }).volumeId === volumeId);
}

describe("CSI migration of in-tree GCE PD PVs", () => {
  it("attaches and detaches a zonal PD through its CSI driver with the translated handle, fsType, context and access mode", async () => {
    const handle = "projects/UNSPECIFIED/zones/us-east1-b/disks/disk-1";
    // [ReadWriteOnce, ReadOnlyMany] is refused for CSI PVs; the translation
    // rewrites it to ReadWriteOnce as the in-tree plugin treated it.
    await admin.create(paths.persistentVolumes, gcePdPersistentVolume("pv-gce-zonal", "disk-1", "us-east1-b", ["ReadWriteOnce", "ReadOnlyMany"]));
    await admin.create(paths.volumeAttachments, volumeAttachment("gce-zonal", driverName, node, "pv-gce-zonal"));

    const attached = await waitForVa("gce-zonal", (va) => va?.status?.attached === true);
    expect(attached?.status).toEqual({ attached: true, attachmentMetadata: { devicePath: `/dev/fake/${handle}` } });
    const [publish] = await callsFor("ControllerPublishVolume", handle);
    expect(publish?.request).toEqual({
      volumeId: handle,
      nodeId: `${node}-id`,
      volumeCapability: { mount: { fsType: "ext4" }, accessMode: { mode: "SINGLE_NODE_WRITER" } },
      volumeContext: { partition: "" },
    });
    const pv = await admin.get<PersistentVolumeJson>(paths.persistentVolume("pv-gce-zonal"));
    expect(pv.metadata.finalizers).toContain(setup.finalizer);

    await admin.delete(paths.volumeAttachment("gce-zonal"));
    await waitForVa("gce-zonal", (va) => va === null);
    const unpublishes = await callsFor("ControllerUnpublishVolume", handle);
    expect(unpublishes.map((call) => [call.code, call.request])).toEqual([["OK", { volumeId: handle, nodeId: `${node}-id` }]]);
  });

  it("attaches a regional PD under its region's handle", async () => {
    const handle = "projects/UNSPECIFIED/regions/us-central1/disks/disk-2";
    await admin.create(paths.persistentVolumes, gcePdPersistentVolume("pv-gce-regional", "disk-2", "us-central1-a__us-central1-c", ["ReadWriteOnce"]));
    await admin.create(paths.volumeAttachments, volumeAttachment("gce-regional", driverName, node, "pv-gce-regional"));
    await waitForVa("gce-regional", (va) => va?.status?.attached === true);
    expect((await callsFor("ControllerPublishVolume", handle)).map((call) => (call.request as { volumeId: string }).volumeId)).toEqual([handle]);
  });

  it("reports a PV it cannot translate in attachError, in upstream's words, without calling the driver", async () => {
    await admin.create(paths.persistentVolumes, gcePdPersistentVolume("pv-gce-split", "disk-3", "us-central1-a__europe-west1-b", ["ReadWriteOnce"]));
    await admin.create(paths.volumeAttachments, volumeAttachment("gce-split", driverName, node, "pv-gce-split"));
    const failed = await waitForVa("gce-split", hasSettledAttachError);
    expect({ message: failed?.status?.attachError?.message, finalizers: failed?.metadata.finalizers }).toEqual({
      message:
        "failed to translate in tree pv to CSI: failed to get region from zones: multiple or no regions gotten from zones, got: map[europe-west1:{} us-central1:{}]",
      finalizers: undefined,
    });
    const published = (await setup.driver.control.calls("ControllerPublishVolume")).map((call) => (call.request as { volumeId: string }).volumeId);
    expect(published.filter((volumeId) => volumeId.includes("disk-3"))).toEqual([]);
  });
});
