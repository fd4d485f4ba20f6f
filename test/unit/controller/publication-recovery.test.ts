import { describe, expect, it } from "bun:test";
import { InheritedPublications } from "../../../src/controller/inherited-publications";
import { PublicationRecovery } from "../../../src/controller/publication-recovery";
import { VanishedVolumeAttachments } from "../../../src/controller/vanished-volume-attachments";
import { VolumeAttachmentsByPv } from "../../../src/controller/volume-attachments-by-pv";
import { parseCsiNode, type CsiNode } from "../../../src/kube/objects/csi-node";
import { parsePersistentVolume, type PersistentVolume } from "../../../src/kube/objects/persistent-volume";
import { parseVolumeAttachment, type VolumeAttachment } from "../../../src/kube/objects/volume-attachment";
import { Store } from "../../../src/kube/store";
import { Logger } from "../../../src/log/logger";

/**
 * Which publishes no VA names a leader may release, and so the most calls
 * a restart can add: with a driver that cannot list, none; with one that
 * lists, only the listed pairs no VA of ours names; with either, one per VA
 * seen to vanish that no VA of ours on its node took over. End to end:
 * test/e2e/restart-costs and test/e2e/leader-recovery.
 */

const driverName = "ours.csi.test";
const finalizer = "external-attacher/ours-csi-test";
const deleting = { deletionTimestamp: "2026-11-27T10:00:00Z" };

function pv(name: string, metadata: object = {}): PersistentVolume {
  return parsePersistentVolume({ metadata: { name, resourceVersion: "1", finalizers: [finalizer], ...metadata }, spec: { csi: { driver: driverName, volumeHandle: `vol-${name}` } } });
}

function va(name: string, node: string, metadata: object = {}): VolumeAttachment {
  return parseVolumeAttachment({ metadata: { name, resourceVersion: "1", finalizers: [finalizer], ...metadata }, spec: { attacher: driverName, nodeName: node, source: { persistentVolumeName: "pv1" } }, status: { attached: true } });
}

function recoveryOn(options: { pvs: PersistentVolume[]; vas?: VolumeAttachment[]; listsPublishedNodes: boolean }) {
  const vas = new Store<VolumeAttachment>();
  const pvs = new Store<PersistentVolume>();
  const csiNodes = new Store<CsiNode>();
  for (const node of ["node1", "node2", "node3"]) csiNodes.upsert(parseCsiNode({ metadata: { name: node, resourceVersion: "1" }, spec: { drivers: [{ name: driverName, nodeID: `${node}-id` }] } }));
  for (const object of options.pvs) pvs.upsert(object);
  for (const object of options.vas ?? []) vas.upsert(object);
  const log = new Logger({ sink: () => {} });
  const vanished = new VanishedVolumeAttachments({ driverName, log });
  const inherited = new InheritedPublications();
  const recovery = new PublicationRecovery({
    driverName,
    lookups: { pvs, csiNodes, driverName },
    vas,
    pvs,
    csiNodes,
    vasByPv: new VolumeAttachmentsByPv(vas),
    vanished,
    inherited,
    listsPublishedNodes: options.listsPublishedNodes,
    log,
  });
  recovery.start();
  return { recovery, vas, vanished, inherited };
}

describe("what a new leader may recover", () => {
  it("with a driver that cannot list, inherits nothing: every PV of ours loses its finalizer as upstream's would, with nothing owed", () => {
    const { recovery } = recoveryOn({ pvs: [pv("pv1", deleting), pv("pv2")], listsPublishedNodes: false });
    expect([recovery.keepsFinalizer(pv("pv1", deleting)), recovery.owesOn("pv1"), recovery.owesOn("pv2")]).toEqual([false, false, false]);
  });

  it("with a driver that lists, keeps our finalizer on an inherited PV being deleted until a listing came in, and never on a live one", () => {
    const { recovery, inherited } = recoveryOn({ pvs: [pv("pv1", deleting), pv("pv2")], listsPublishedNodes: true });
    const beforeListing = [recovery.keepsFinalizer(pv("pv1", deleting)), recovery.keepsFinalizer(pv("pv2"))];
    inherited.checked("pv1");
    expect({ beforeListing, afterListing: recovery.keepsFinalizer(pv("pv1", deleting)) }).toEqual({ beforeListing: [true, false], afterListing: false });
  });
});

describe("the most a recovery unpublishes", () => {
  it("with a listing, only the listed nodes that no VA of ours names", () => {
    const { recovery, inherited } = recoveryOn({ pvs: [pv("pv1")], vas: [va("va-on-1", "node1")], listsPublishedNodes: true });
    inherited.markOrphans("pv1", ["node1-id", "node3-id"]);
    expect(recovery.planFor(pv("pv1"))).toEqual({ pvName: "pv1", nodeIds: ["node3-id"], vanished: [], orphans: true });
  });

  it("for a VA seen to vanish, its own node once, unless a VA of ours attaching there, or holding our finalizer, took the publish over", () => {
    const { recovery, vas, vanished } = recoveryOn({ pvs: [pv("pv1")], listsPublishedNodes: false });
    vanished.note(va("gone-1", "node1"));
    vanished.note(va("gone-2", "node2"));
    // Attaching on node1 takes gone-1 over; a detached VA being deleted on node2 does not take gone-2 over.
    vas.upsert(va("new-1", "node1", { finalizers: [] }));
    vas.upsert(va("old-2", "node2", { finalizers: [], ...deleting }));
    expect(recovery.planFor(pv("pv1"))).toEqual({ pvName: "pv1", nodeIds: ["node2-id"], vanished: ["gone-1", "gone-2"], orphans: false });
  });

  it("keeps a vanished VA owed, unpublishing nothing, while a VA of ours on its PV has a node that cannot be told and may have taken it over", () => {
    const { recovery, vas, vanished } = recoveryOn({ pvs: [pv("pv1")], listsPublishedNodes: false });
    vanished.note(va("gone-1", "node1"));
    // No CSINode for "nowhere" and no node-ID annotation: its publish could be on any node.
    vas.upsert(va("unknown-node", "nowhere", { finalizers: [] }));
    const plan = recovery.planFor(pv("pv1"));
    recovery.settled(plan);
    expect({ plan, stillOwed: recovery.vanishedNaming("pv1") }).toEqual({ plan: { pvName: "pv1", nodeIds: [], vanished: [], orphans: false }, stillOwed: ["gone-1"] });
  });

  it("settles what a plan covered once its unpublishes succeeded, and nothing before", () => {
    const { recovery, inherited, vanished } = recoveryOn({ pvs: [pv("pv1")], listsPublishedNodes: true });
    vanished.note(va("gone-1", "node1"));
    inherited.markOrphans("pv1", ["node2-id"]);
    const plan = recovery.planFor(pv("pv1"));
    const owedBefore = recovery.owesOn("pv1");
    recovery.settled(plan);
    expect({ owedBefore, owedAfter: recovery.owesOn("pv1"), nodeIds: plan.nodeIds }).toEqual({ owedBefore: true, owedAfter: false, nodeIds: ["node1-id", "node2-id"] });
  });
});
