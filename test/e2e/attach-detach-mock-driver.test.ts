import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AdminClient } from "../ground/admin-client";
import { ensureComponents } from "../ground/components";
import { startMockCsiDriver, type MockCsiDriver } from "../ground/mock-csi-driver";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { startAttacher, type AttacherProcess } from "../ground/attacher-process";
import { csiTestClient } from "../ground/csi-test-client";
import { csiNode, paths, persistentVolume, volumeAttachment, type PersistentVolumeJson, type VolumeAttachmentJson, hasSettledAttachError } from "../ground/objects";

/**
 * The compiled attacher against a real kube-apiserver and a real CSI driver
 * (Kubernetes' own mock CSI driver, which keeps publish state per node and
 * rejects unknown node IDs).
 */
const driverName = "mock.csi.test";
const finalizer = "external-attacher/mock-csi-test";
const nodeName = "node-1";

let cluster: TestCluster;
let driver: MockCsiDriver;
let attacher: AttacherProcess;
let admin: AdminClient;
let dir: string;

beforeAll(async () => {
  const components = await ensureComponents();
  cluster = await startTestCluster({ components });
  admin = new AdminClient(cluster);
  dir = mkdtempSync(join(tmpdir(), "e2e-mock-driver-"));
  driver = await startMockCsiDriver({ binary: components.mockCsiDriver, dir, name: driverName });
  await admin.create(paths.csiNodes, csiNode(nodeName, [{ name: driverName, nodeID: driver.nodeId }]));
  attacher = await startAttacher({ kubeconfig: cluster.kubeconfigPath, csiAddress: driver.socket, logDir: dir });
});

afterAll(async () => {
  await attacher?.[Symbol.asyncDispose]();
  await driver?.stop();
  await cluster?.stop();
});

/** The mock driver records a publish as the key "<nodeID>/dev" in the volume's context. */
async function publishedDevice(volumeId: string): Promise<string | undefined> {
  const listing = await csiTestClient(driver.socket).listVolumes({});
  const entry = listing.entries.find((candidate) => candidate.volume?.volumeId === volumeId);
  if (!entry) throw new Error(`volume ${volumeId} not listed by the driver`);
  return entry.volume?.volumeContext[`${driver.nodeId}/dev`];
}

describe("attach and detach through the real mock CSI driver", () => {
  it("attaches a VA with the driver's publish context, finalizers and node-ID annotation, then detaches it on deletion", async () => {
    const created = await csiTestClient(driver.socket).createVolume({
      name: "e2e-volume-1",
      volumeCapabilities: [{ accessType: { case: "mount", value: {} }, accessMode: { mode: 1 } }],
    });
    const volumeId = created.volume?.volumeId ?? "";
    expect(volumeId).not.toBe("");
    await admin.create(paths.persistentVolumes, persistentVolume("pv-1", { driver: driverName, volumeHandle: volumeId }));
    await admin.create(paths.volumeAttachments, volumeAttachment("va-1", driverName, nodeName, "pv-1"));

    const attached = await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("va-1"), (va) => va?.status?.attached === true);
    expect({ finalizers: attached?.metadata.finalizers, annotations: attached?.metadata.annotations, status: attached?.status }).toEqual({
      finalizers: [finalizer],
      annotations: { "csi.alpha.kubernetes.io/node-id": driver.nodeId },
      status: { attached: true, attachmentMetadata: { device: "/dev/mock", readonly: "false" } },
    });
    const pv = await admin.get<PersistentVolumeJson>(paths.persistentVolume("pv-1"));
    expect(pv.metadata.finalizers).toEqual(["kubernetes.io/pv-protection", finalizer]);
    expect(await publishedDevice(volumeId)).toBe("/dev/mock");

    await admin.delete(paths.volumeAttachment("va-1"));
    await admin.waitFor(paths.volumeAttachment("va-1"), (va) => va === null);
    expect(await publishedDevice(volumeId)).toBeUndefined();
  });

  it("removes the PV finalizer once the PV is deleted and no VA references it", async () => {
    // pv-1 from the test above: its VA is gone. The apiserver's own
    // pv-protection finalizer has no controller here, so the test lifts it.
    const pv = await admin.get<PersistentVolumeJson>(paths.persistentVolume("pv-1"));
    expect(pv.metadata.finalizers).toContain(finalizer);
    await admin.patch(paths.persistentVolume("pv-1"), { metadata: { finalizers: pv.metadata.finalizers?.filter((name) => name !== "kubernetes.io/pv-protection") } });
    await admin.delete(paths.persistentVolume("pv-1"));
    await admin.waitFor(paths.persistentVolume("pv-1"), (object) => object === null);
  });

  it("keeps the PV finalizer while a VA still references the deleted PV", async () => {
    await admin.create(paths.persistentVolumes, persistentVolume("pv-2", { driver: driverName, volumeHandle: "2" }));
    await admin.create(paths.volumeAttachments, volumeAttachment("va-2", driverName, nodeName, "pv-2"));
    await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("va-2"), (va) => va?.status?.attached === true);
    await admin.patch(paths.persistentVolume("pv-2"), { metadata: { finalizers: [finalizer] } });
    await admin.delete(paths.persistentVolume("pv-2"));
    await attacher.waitForLog(/"PersistentVolume still used by a VolumeAttachment" pv="pv-2"/);
    const pv = await admin.get<PersistentVolumeJson>(paths.persistentVolume("pv-2"));
    expect({ deleting: pv.metadata.deletionTimestamp !== undefined, finalizers: pv.metadata.finalizers }).toEqual({ deleting: true, finalizers: [finalizer] });

    // Detach still works for a VA whose PV is being deleted; then the PV goes.
    await admin.delete(paths.volumeAttachment("va-2"));
    await admin.waitFor(paths.volumeAttachment("va-2"), (va) => va === null);
    await admin.waitFor(paths.persistentVolume("pv-2"), (object) => object === null);
  });

  it("records the driver's refusal in attachError, worded as Go's gRPC prints it", async () => {
    // The mock driver knows only its own node ID and answers NotFound for any other.
    await admin.create(paths.csiNodes, csiNode("node-elsewhere", [{ name: driverName, nodeID: "someone-else" }]));
    await admin.create(paths.persistentVolumes, persistentVolume("pv-3", { driver: driverName, volumeHandle: "3" }));
    await admin.create(paths.volumeAttachments, volumeAttachment("va-3", driverName, "node-elsewhere", "pv-3"));
    const failed = await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("va-3"), hasSettledAttachError);
    expect({ attached: failed?.status?.attached, message: failed?.status?.attachError?.message, errorCode: failed?.status?.attachError?.errorCode }).toEqual({
      attached: false,
      message: `rpc error: code = NotFound desc = Not matching Node ID someone-else to Mock Node ID ${driver.nodeId}`,
      errorCode: 5,
    });
    expect(failed?.status?.attachError?.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    // The finalizer went on before the call, so deleting the VA must still
    // end in a successful unpublish: while the driver refuses, the VA stays.
    await admin.delete(paths.volumeAttachment("va-3"));
    const refused = await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("va-3"), (va) => va?.status?.detachError !== undefined);
    expect({ finalizers: refused?.metadata.finalizers, detachError: refused?.status?.detachError?.message }).toEqual({
      finalizers: [finalizer],
      detachError: `rpc error: code = NotFound desc = Node ID someone-else does not match to expected Node ID ${driver.nodeId}`,
    });
    // Once the node is known to the driver (a node ID is immutable, so the
    // CSINode is re-registered), the retry detaches and the VA goes.
    await admin.delete(paths.csiNode("node-elsewhere"));
    await admin.create(paths.csiNodes, csiNode("node-elsewhere", [{ name: driverName, nodeID: driver.nodeId }]));
    await admin.waitFor(paths.volumeAttachment("va-3"), (va) => va === null);
  });
});
