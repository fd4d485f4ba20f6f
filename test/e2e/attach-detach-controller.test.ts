import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { AdminClient, type KubeObject } from "../ground/admin-client";
import type { KubeControllerManager } from "../ground/kube-controller-manager";
import { waitForCondition } from "../ground/managed-process";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { startFakeDriverSetup, stopFakeDriverSetup, type FakeDriverSetup } from "./support/fake-driver-ground";
import { paths, persistentVolume, type PersistentVolumeJson, type VolumeAttachmentJson } from "../ground/objects";
import {
  attachRequiredCsiDriver,
  attachedVolumeName,
  attachmentName,
  claimFor,
  controllerManagedNode,
  podOnNode,
  podPaths,
  volumesAttachedTo,
  type EventJson,
  type NodeJson,
} from "../ground/pod-objects";
import { callsFor, rawPersistentVolume } from "./support/rule-objects";

/**
 * The attacher under its one real client: kube-controller-manager's
 * attach/detach controller turns Pods into VolumeAttachments, waits for our
 * `status.attached`, and reports the volume in `node.status.volumesAttached`
 * (what a kubelet waits for before mounting). One ground, one controller
 * manager and two attachers serve every case: the fault driver under a CSI
 * name, and the same driver under AWS EBS's name for migrated in-tree PVs.
 */
let cluster: TestCluster;
let admin: AdminClient;
let controllerManager: KubeControllerManager;
let csi: FakeDriverSetup;
let ebs: FakeDriverSetup;
const namespace = "default";
const nodes = ["adc-node-a", "adc-node-b", "adc-node-c"] as const;
const [nodeA, nodeB, nodeC] = nodes;
const csiDriverName = "adc.fake.csi.test";
const ebsDriverName = "ebs.csi.aws.com";
/** Our retries are fast, so that an outage's end shows up within the controller's own back-off. */
const attacherArgs = ["--retry-interval-start=100ms", "--retry-interval-max=1s"];

beforeAll(async () => {
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  // Nodes before the controller: a Pod it sees before its Node waits minutes.
  for (const node of nodes) await admin.create(podPaths.nodes, controllerManagedNode(node));
  for (const driver of [csiDriverName, ebsDriverName]) await admin.create(podPaths.csiDrivers, attachRequiredCsiDriver(driver));
  controllerManager = await cluster.startControllerManager();
  csi = await startFakeDriverSetup(cluster, admin, { driverName: csiDriverName, nodes, attacherArgs });
  ebs = await startFakeDriverSetup(cluster, admin, { driverName: ebsDriverName, nodes, attacherArgs });
});

afterAll(async () => {
  await stopFakeDriverSetup(csi);
  await stopFakeDriverSetup(ebs);
  await cluster?.stop();
});

/** createBoundClaim creates PV `pv` and claim `claim` for it, and waits until the PV binder has bound them. */
async function createBoundClaim(claim: string, pv: KubeObject, pvName: string, accessModes?: readonly string[]): Promise<void> {
  await admin.create(paths.persistentVolumes, pv);
  // A claim that races the binder's first write to its PV loses on a
  // conflict and waits for the binder's next full resync (15 s).
  await admin.waitFor<{ status?: { phase?: string } }>(paths.persistentVolume(pvName), (current) => current?.status?.phase === "Available", 60_000);
  await admin.create(podPaths.claims(namespace), claimFor(claim, pvName, accessModes));
  await admin.waitFor<{ status?: { phase?: string } }>(podPaths.claim(namespace, claim), (pvc) => pvc?.status?.phase === "Bound", 60_000);
}

/** csiClaim creates a bound claim on a CSI PV of the fault driver. */
async function csiClaim(name: string, volumeHandle: string, accessModes: readonly string[] = ["ReadWriteOnce"]): Promise<void> {
  await createBoundClaim(name, persistentVolume(`pv-${name}`, { driver: csiDriverName, volumeHandle, accessModes }), `pv-${name}`, accessModes);
}

/** A VA as the controller writes it: its source is always a PV's name here. */
type ControllerVaJson = VolumeAttachmentJson & {
  metadata: { deletionTimestamp?: string };
  spec: { source: { persistentVolumeName?: string } };
};

function waitForVa(name: string, predicate: (va: ControllerVaJson | null) => boolean): Promise<ControllerVaJson | null> {
  return admin.waitFor<ControllerVaJson>(paths.volumeAttachment(name), predicate, 60_000);
}

function waitForNode(node: string, predicate: (volumes: string[]) => boolean): Promise<NodeJson | null> {
  return admin.waitFor<NodeJson>(podPaths.node(node), (current) => predicate(volumesAttachedTo(current)), 60_000);
}

async function deletePod(name: string): Promise<void> {
  // A normal delete, as kubectl does: with no kubelet the Pod keeps its
  // deletionTimestamp, and the controller counts it as terminated at once.
  await admin.delete(podPaths.pod(namespace, name));
}

describe("kube-controller-manager's attach/detach controller", () => {
  it("creates the VolumeAttachment for a scheduled Pod's volume, which we attach, and lists the volume in node.status.volumesAttached", async () => {
    const handle = "adc-vol-attach";
    await csiClaim("claim-attach", handle);
    await admin.create(podPaths.pods(namespace), podOnNode("pod-attach", nodeA, ["claim-attach"]));

    const vaName = attachmentName(handle, csiDriverName, nodeA);
    const va = await waitForVa(vaName, (current) => current?.status?.attached === true);
    expect({ spec: va?.spec, finalizers: va?.metadata.finalizers, status: va?.status }).toEqual({
      spec: { attacher: csiDriverName, nodeName: nodeA, source: { persistentVolumeName: "pv-claim-attach" } },
      finalizers: [csi.finalizer],
      status: { attached: true, attachmentMetadata: { devicePath: `/dev/fake/${handle}` } },
    });
    const publishes = await callsFor(csi.driver, "ControllerPublishVolume", handle);
    expect(publishes.map((call) => [call.code, (call.request as { nodeId?: string }).nodeId])).toEqual([["OK", `${nodeA}-id`]]);

    const node = await waitForNode(nodeA, (volumes) => volumes.includes(attachedVolumeName(csiDriverName, handle)));
    expect(node?.status?.volumesAttached?.find((volume) => volume.name === attachedVolumeName(csiDriverName, handle))).toEqual({
      name: attachedVolumeName(csiDriverName, handle),
      devicePath: "",
    });
  });

  it("detaches the volume once its Pod is deleted, and then no longer holds the PV's deletion", async () => {
    const handle = "adc-vol-detach";
    await csiClaim("claim-detach", handle);
    await admin.create(podPaths.pods(namespace), podOnNode("pod-detach", nodeA, ["claim-detach"]));
    const vaName = attachmentName(handle, csiDriverName, nodeA);
    await waitForNode(nodeA, (volumes) => volumes.includes(attachedVolumeName(csiDriverName, handle)));
    const held = await admin.get<PersistentVolumeJson>(paths.persistentVolume("pv-claim-detach"));
    expect(held.metadata.finalizers).toContain(csi.finalizer);

    await deletePod("pod-detach");
    await waitForVa(vaName, (current) => current === null);
    await waitForNode(nodeA, (volumes) => !volumes.includes(attachedVolumeName(csiDriverName, handle)));
    const unpublishes = await callsFor(csi.driver, "ControllerUnpublishVolume", handle);
    expect(unpublishes.map((call) => [call.code, (call.request as { nodeId?: string }).nodeId])).toEqual([["OK", `${nodeA}-id`]]);

    // Our finalizer stays on a live PV (upstream's rule); deleting the PV
    // now that no VA names it leaves only the apiserver's own protection.
    await admin.delete(paths.persistentVolume("pv-claim-detach"));
    const deleted = await admin.waitFor<PersistentVolumeJson>(
      paths.persistentVolume("pv-claim-detach"),
      (pv) => pv?.metadata.deletionTimestamp !== undefined && !(pv.metadata.finalizers ?? []).includes(csi.finalizer),
      30_000,
    );
    expect(deleted?.metadata.finalizers).toEqual(["kubernetes.io/pv-protection"]);
  });

  it("attaches a ReadWriteMany volume to three nodes, and deleting one node's Pod detaches only that node", async () => {
    const handle = "adc-vol-rwx";
    await csiClaim("claim-rwx", handle, ["ReadWriteMany"]);
    for (const node of nodes) await admin.create(podPaths.pods(namespace), podOnNode(`pod-rwx-${node}`, node, ["claim-rwx"]));
    const volume = attachedVolumeName(csiDriverName, handle);
    for (const node of nodes) {
      await waitForVa(attachmentName(handle, csiDriverName, node), (current) => current?.status?.attached === true);
      await waitForNode(node, (volumes) => volumes.includes(volume));
    }
    expect((await csi.driver.control.published())[handle]?.toSorted()).toEqual(nodes.map((node) => `${node}-id`));

    await deletePod(`pod-rwx-${nodeB}`);
    await waitForVa(attachmentName(handle, csiDriverName, nodeB), (current) => current === null);
    await waitForNode(nodeB, (volumes) => !volumes.includes(volume));

    const unpublishes = await callsFor(csi.driver, "ControllerUnpublishVolume", handle);
    expect(unpublishes.map((call) => (call.request as { nodeId?: string }).nodeId)).toEqual([`${nodeB}-id`]);
    expect((await csi.driver.control.published())[handle]?.toSorted()).toEqual([`${nodeA}-id`, `${nodeC}-id`]);
    for (const node of [nodeA, nodeC]) {
      const kept = await admin.get<ControllerVaJson>(paths.volumeAttachment(attachmentName(handle, csiDriverName, node)));
      expect({ attached: kept.status?.attached, deleting: kept.metadata.deletionTimestamp }).toEqual({ attached: true, deleting: undefined });
      expect(volumesAttachedTo(await admin.get<NodeJson>(podPaths.node(node)))).toContain(volume);
    }
  });

  it("attaches an in-tree AWS EBS volume through ebs.csi.aws.com under the migrated handle, detaches it, and hands the unmarked PV back", async () => {
    const ebsId = "vol-0adc0ebs00000001";
    const pv = rawPersistentVolume("pv-claim-ebs", { awsElasticBlockStore: { volumeID: `aws://us-east-1a/${ebsId}`, fsType: "ext4" } });
    await createBoundClaim("claim-ebs", pv, "pv-claim-ebs");
    await admin.create(podPaths.pods(namespace), podOnNode("pod-ebs", nodeC, ["claim-ebs"]));

    const vaName = attachmentName(ebsId, ebsDriverName, nodeC);
    const va = await waitForVa(vaName, (current) => current?.status?.attached === true);
    expect({ spec: va?.spec, finalizers: va?.metadata.finalizers }).toEqual({
      spec: { attacher: ebsDriverName, nodeName: nodeC, source: { persistentVolumeName: "pv-claim-ebs" } },
      finalizers: [ebs.finalizer],
    });
    const [publish] = await callsFor(ebs.driver, "ControllerPublishVolume", ebsId);
    expect(publish?.request).toEqual({
      volumeId: ebsId,
      nodeId: `${nodeC}-id`,
      volumeCapability: { mount: { fsType: "ext4" }, accessMode: { mode: "SINGLE_NODE_WRITER" } },
      volumeContext: { partition: "0" },
    });
    await waitForNode(nodeC, (volumes) => volumes.includes(attachedVolumeName(ebsDriverName, ebsId)));
    expect((await admin.get<PersistentVolumeJson>(paths.persistentVolume("pv-claim-ebs"))).metadata.finalizers).toContain(ebs.finalizer);

    await deletePod("pod-ebs");
    await waitForVa(vaName, (current) => current === null);
    await waitForNode(nodeC, (volumes) => !volumes.includes(attachedVolumeName(ebsDriverName, ebsId)));
    expect((await callsFor(ebs.driver, "ControllerUnpublishVolume", ebsId)).map((call) => call.code)).toEqual(["OK"]);
    // The PV binder writes no `pv.kubernetes.io/migrated-to` on a PV made by
    // hand (only on provisioned ones), and an in-tree PV not marked as
    // migrated to us is handed back once no VA names it: our finalizer goes
    // while the PV lives on, unlike a CSI PV's.
    const released = await admin.waitFor<PersistentVolumeJson & { metadata: { annotations?: Record<string, string> } }>(
      paths.persistentVolume("pv-claim-ebs"),
      (current) => !(current?.metadata.finalizers ?? []).includes(ebs.finalizer),
      30_000,
    );
    expect({ finalizers: released?.metadata.finalizers, migratedTo: released?.metadata.annotations?.["pv.kubernetes.io/migrated-to"] }).toEqual({
      finalizers: ["kubernetes.io/pv-protection"],
      migratedTo: undefined,
    });
    // The other attacher never saw a VA of its driver's name for this PV.
    expect(await callsFor(csi.driver, "ControllerPublishVolume", ebsId)).toEqual([]);
  });

  it("ends a driver outage with the volume attached, after the driver's error reached the Pod's events", async () => {
    const handle = "adc-vol-outage";
    await csi.driver.control.script("ControllerPublishVolume", [{ code: "Unavailable", message: "storage backend unreachable", always: true, volumeId: handle }]);
    await csiClaim("claim-outage", handle);
    const pod = await admin.create<KubeObject>(podPaths.pods(namespace), podOnNode("pod-outage", nodeB, ["claim-outage"]));

    let failures: EventJson[] = [];
    await waitForCondition(
      async () => {
        const events = await admin.list<EventJson>(podPaths.events(namespace), { fieldSelector: "involvedObject.kind=Pod,involvedObject.name=pod-outage" });
        failures = events.items.filter((event) => event.reason === "FailedAttachVolume");
        // Twice: the outage outlasts one of the controller's retries.
        return (failures[0]?.count ?? 0) >= 2;
      },
      { description: "a FailedAttachVolume event on pod-outage, repeated", timeoutMs: 60_000, intervalMs: 200, watch: [controllerManager.process, csi.attacher.process] },
    );
    const [failure] = failures;
    expect(failures.length).toBe(1);
    expect({ type: failure?.type, involvedObject: failure?.involvedObject, component: failure?.source?.component, message: failure?.message }).toEqual({
      type: "Warning",
      involvedObject: expect.objectContaining({ kind: "Pod", name: "pod-outage", namespace, uid: pod.metadata?.uid }),
      component: "attachdetach-controller",
      message: `AttachVolume.Attach failed for volume "pv-claim-outage" : rpc error: code = Unavailable desc = storage backend unreachable`,
    });
    const vaName = attachmentName(handle, csiDriverName, nodeB);
    const failing = await admin.get<VolumeAttachmentJson>(paths.volumeAttachment(vaName));
    expect(failing.status?.attached).toBe(false);
    expect(volumesAttachedTo(await admin.get<NodeJson>(podPaths.node(nodeB)))).not.toContain(attachedVolumeName(csiDriverName, handle));

    // The back end is reachable again.
    await csi.driver.control.clearScripts();
    await waitForNode(nodeB, (volumes) => volumes.includes(attachedVolumeName(csiDriverName, handle)));
    const attached = await admin.get<VolumeAttachmentJson>(paths.volumeAttachment(vaName));
    expect(attached.status).toEqual({ attached: true, attachmentMetadata: { devicePath: `/dev/fake/${handle}` } });
  });
});
