import { describe, expect, it } from "bun:test";
import { InheritedPublications } from "../../../src/controller/inherited-publications";
import { nodeIdsNamedBy, unnamedNodeIds } from "../../../src/controller/unnamed-publications";
import { VolumeLocks } from "../../../src/controller/volume-locks";
import { parseCsiNode } from "../../../src/kube/objects/csi-node";
import { parsePersistentVolume } from "../../../src/kube/objects/persistent-volume";
import { parseVolumeAttachment } from "../../../src/kube/objects/volume-attachment";
import { Store } from "../../../src/kube/store";

/**
 * The pure rules of recovering a publish no VA of ours names any more
 * (kubernetes#77988 while no replica watched). The same rules run end to end
 * in test/e2e/leader-recovery.
 */

const driver = "ours.csi.test";
const finalizer = "external-attacher/ours-csi-test";

function csiNodes(entries: Record<string, string | undefined>): Store<ReturnType<typeof parseCsiNode>> {
  const store = new Store<ReturnType<typeof parseCsiNode>>();
  for (const [name, nodeId] of Object.entries(entries)) {
    store.upsert(parseCsiNode({ metadata: { name, resourceVersion: "1" }, spec: { drivers: nodeId === undefined ? [] : [{ name: driver, nodeID: nodeId }] } }));
  }
  return store;
}

function va(node: string, remembered?: string) {
  return parseVolumeAttachment({
    metadata: { name: `va-${node}`, resourceVersion: "1", ...(remembered === undefined ? {} : { annotations: { "csi.alpha.kubernetes.io/node-id": remembered } }) },
    spec: { attacher: driver, nodeName: node, source: { persistentVolumeName: "pv1" } },
  });
}

describe("which nodes a VA of ours names", () => {
  it("names its CSINode's ID and the one remembered in its annotation, both when they differ", () => {
    const nodes = csiNodes({ "node-a": "id-a", "node-b": "id-b-now" });
    expect([...(nodeIdsNamedBy([va("node-a"), va("node-b", "id-b-then"), va("node-gone", "id-gone")], nodes, driver) ?? [])].sort()).toEqual([
      "id-a",
      "id-b-now",
      "id-b-then",
      "id-gone",
    ]);
  });

  it("cannot tell when a VA has neither a registered node nor an annotation: then no node may be recovered", () => {
    const unknown = nodeIdsNamedBy([va("node-a"), va("node-unregistered")], csiNodes({ "node-a": "id-a", "node-unregistered": undefined }), driver);
    expect({ unknown, targets: unnamedNodeIds(["id-a", "id-b"], unknown) }).toEqual({ unknown: undefined, targets: [] });
  });
});

describe("which nodes a recovery unpublishes from", () => {
  it("takes every candidate no VA of ours names, each once, sorted", () => {
    expect(unnamedNodeIds(["id-c", "id-a", "id-b", "id-c"], new Set(["id-b"]))).toEqual(["id-a", "id-c"]);
  });
});

describe("inherited publications", () => {
  it("inherits exactly the PVs that carry our finalizer at the first lists, until checked", () => {
    const pv = (name: string, finalizers: string[]) => parsePersistentVolume({ metadata: { name, resourceVersion: "1", finalizers }, spec: {} });
    const inherited = new InheritedPublications();
    inherited.inherit([pv("ours", ["kubernetes.io/pv-protection", finalizer]), pv("never-attached", ["kubernetes.io/pv-protection"]), pv("also-ours", [finalizer])], driver);
    const first = inherited.inheritedNames().sort();
    inherited.checked("ours");
    expect({ first, after: inherited.inheritedNames(), ours: inherited.isInherited("ours"), alsoOurs: inherited.isInherited("also-ours") }).toEqual({
      first: ["also-ours", "ours"],
      after: ["also-ours"],
      ours: false,
      alsoOurs: true,
    });
  });

  it("keeps the reconciler's latest orphan marks of a PV until they are released", () => {
    const inherited = new InheritedPublications();
    inherited.markOrphans("pv1", ["id-a"]);
    inherited.markOrphans("pv1", ["id-a", "id-b"]);
    const marked = inherited.orphansOf("pv1");
    inherited.orphansReleased("pv1");
    expect({ marked, released: inherited.orphansOf("pv1") }).toEqual({ marked: ["id-a", "id-b"], released: undefined });
  });
});

describe("volume locks", () => {
  it("runs work on one volume one at a time, in order, and work on another volume beside it", async () => {
    const locks = new VolumeLocks();
    const order: string[] = [];
    let releaseFirst = () => {};
    const first = locks.withLock("vol-1", async () => {
      order.push("first starts");
      await new Promise<void>((resolve) => {
        releaseFirst = resolve;
      });
      order.push("first ends");
    });
    const second = locks.withLock("vol-1", async () => void order.push("second runs"));
    const other = locks.withLock("vol-2", async () => void order.push("other volume runs"));
    await other;
    releaseFirst();
    await Promise.all([first, second]);
    expect(order).toEqual(["first starts", "other volume runs", "first ends", "second runs"]);
  });

  it("lets the next holder run when the work before it failed", async () => {
    const locks = new VolumeLocks();
    const failed = locks.withLock("vol-1", async () => {
      throw new Error("unpublish failed");
    });
    await expect(failed).rejects.toThrow("unpublish failed");
    expect(await locks.withLock("vol-1", async () => "ran")).toBe("ran");
  });
});
