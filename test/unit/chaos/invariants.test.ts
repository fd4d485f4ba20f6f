import { describe, expect, it } from "bun:test";
import type { ObjectChange, StoredObject } from "../../chaos/etcd-history";
import { checkInvariants, sweptByApiserver, type Evidence } from "../../chaos/invariants";
import type { JournalEntry } from "../../ground/fake-csi-driver/state-dir";

/**
 * The chaos suite's judge must catch each broken promise, or its "held"
 * would mean nothing: one well-behaved VA life, then each promise broken
 * on purpose.
 */
const driverName = "judge.csi.test";
const finalizer = "external-attacher/judge-csi-test";

function va(name: string, extra: { finalizers?: string[]; attached?: boolean; deleting?: boolean } = {}): StoredObject {
  return {
    metadata: { name, ...(extra.finalizers ? { finalizers: extra.finalizers } : {}), ...(extra.deleting ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}) },
    spec: { attacher: driverName, nodeName: "node-a", source: { persistentVolumeName: `pv-${name}` } },
    status: { attached: extra.attached ?? false },
  };
}

function pv(name: string, finalizers: string[] = []): StoredObject {
  return { metadata: { name, finalizers }, spec: { csi: { volumeHandle: `vol-${name.slice(3)}` } } };
}

let revision = 0;
function change(kind: ObjectChange["kind"], name: string, object: StoredObject | null, atMs: number): ObjectChange {
  revision += 1;
  return { revision, kind, name, object, receivedAtMs: atMs };
}

function call(method: "ControllerPublishVolume" | "ControllerUnpublishVolume", volumeId: string, finishedAtMs: number, options: { code?: string; applied?: boolean; nodeId?: string } = {}): JournalEntry {
  const code = options.code ?? "OK";
  return {
    seq: finishedAtMs,
    pid: 1,
    method,
    request: { volumeId, nodeId: options.nodeId ?? "node-a-id" },
    code: code as JournalEntry["code"],
    message: null,
    applied: options.applied ?? code === "OK",
    startedAt: new Date(finishedAtMs - 1).toISOString(),
    finishedAt: new Date(finishedAtMs).toISOString(),
  };
}

/** A VA attached, then deleted and detached properly: publish at 20, unpublish at 50, VA gone at 60. */
function goodLife(): Evidence {
  return {
    history: [
      change("PersistentVolume", "pv-1", pv("pv-1"), 5),
      change("VolumeAttachment", "1", va("1"), 10),
      change("PersistentVolume", "pv-1", pv("pv-1", [finalizer]), 12),
      change("VolumeAttachment", "1", va("1", { finalizers: [finalizer] }), 15),
      change("VolumeAttachment", "1", va("1", { finalizers: [finalizer], attached: true }), 25),
      change("VolumeAttachment", "1", va("1", { finalizers: [finalizer], attached: true, deleting: true }), 30),
      change("VolumeAttachment", "1", null, 60),
      change("PersistentVolume", "pv-1", pv("pv-1"), 70),
    ],
    journal: [call("ControllerPublishVolume", "vol-1", 20), call("ControllerUnpublishVolume", "vol-1", 50)],
    published: { "vol-1": [] },
    driverName,
    finalizer,
    nodeIdOf: (node) => `${node}-id`,
  };
}

function broken(evidence: Evidence): Record<string, readonly string[]> {
  return Object.fromEntries(checkInvariants(evidence).filter((result) => result.violations.length > 0).map((result) => [result.name, result.violations]));
}

describe("chaos invariants", () => {
  it("find nothing wrong with a VA attached, detached and released in order", () => {
    expect(broken(goodLife())).toEqual({});
  });

  it("catch a VA that vanished before its volume was unpublished", () => {
    const evidence = goodLife();
    expect(broken({ ...evidence, journal: [call("ControllerPublishVolume", "vol-1", 20), call("ControllerUnpublishVolume", "vol-1", 65)] })).toEqual({
      "every deleted VA that was published was unpublished before it vanished (after, if kube-apiserver's delete race took it), and stays unpublished": ["1 vanished before vol-1 was unpublished"],
      "no VA lost our finalizer while the driver still had its volume published (but to kube-apiserver's delete race)": [`1 lost our finalizer at ${new Date(60).toISOString()} while vol-1 was published`],
    });
  });

  it("catch a publish after the unpublish that ended the VA, and the volume left published", () => {
    const evidence = goodLife();
    expect(broken({ ...evidence, journal: [...evidence.journal, call("ControllerPublishVolume", "vol-1", 55)], published: { "vol-1": ["node-a-id"] } })).toEqual({
      "every deleted VA that was published was unpublished before it vanished (after, if kube-apiserver's delete race took it), and stays unpublished": ["1: no unpublish of vol-1 after its last publish"],
      "no VA lost our finalizer while the driver still had its volume published (but to kube-apiserver's delete race)": [`1 lost our finalizer at ${new Date(60).toISOString()} while vol-1 was published`],
      "no publish of a volume after the unpublish that ended its VA": [`1: vol-1 was published at ${new Date(55).toISOString()}, after its final unpublish`],
    });
  });

  it("count a failed call that did the work (reply lost) as a publish", () => {
    const evidence = goodLife();
    const journal = [call("ControllerPublishVolume", "vol-1", 20, { code: "DeadlineExceeded", applied: true })];
    expect(Object.keys(broken({ ...evidence, journal }))).toEqual(["every deleted VA that was published was unpublished before it vanished (after, if kube-apiserver's delete race took it), and stays unpublished", "no VA lost our finalizer while the driver still had its volume published (but to kube-apiserver's delete race)"]);
  });

  it("catch a publish to another node's ID", () => {
    const evidence = goodLife();
    expect(broken({ ...evidence, journal: [call("ControllerPublishVolume", "vol-1", 20, { nodeId: "node-b-id" }), call("ControllerUnpublishVolume", "vol-1", 50)] })).toMatchObject({
      "every publish went to the node ID of its VA's node": ["vol-1 was published to node-b-id, but 1 is on node-a"],
    });
  });

  it("catch a PV that lost our finalizer while a VA still named it", () => {
    const evidence = goodLife();
    const history = [...evidence.history];
    // The PV's finalizer goes at revision 6 of 8, while the VA still exists.
    history.splice(5, 0, change("PersistentVolume", "pv-1", pv("pv-1"), 28));
    const result = broken({ ...evidence, history });
    expect(Object.keys(result)).toEqual(["no PV lost our finalizer while a VA named it"]);
  });

  it("catch an existing VA that is not attached, or whose volume the driver does not have on its node", () => {
    const evidence = goodLife();
    const history = [change("PersistentVolume", "pv-2", pv("pv-2"), 5), change("VolumeAttachment", "2", va("2", { finalizers: [finalizer], attached: true }), 10), change("VolumeAttachment", "3", va("3"), 11)];
    expect(broken({ ...evidence, history: [...evidence.history, ...history] })).toEqual({
      "every existing VA is attached, keeps our finalizer, and is published on its node ID": ["2: the driver has vol-2 on [], not node-a-id", "3 is not attached"],
    });
  });

  /** kube-apiserver's delete race (kubernetes#77988): the VA goes from "our finalizer, publish in flight" straight to deleted, no deletionTimestamp between. */
  function sweptLife(journal: readonly JournalEntry[]): Evidence {
    const evidence = goodLife();
    const history = [...evidence.history.slice(0, 4), change("VolumeAttachment", "1", null, 18)];
    return { ...evidence, history, journal };
  }

  it("accept a VA kube-apiserver deleted despite our finalizer when its volume was unpublished afterwards, and name it", () => {
    // The publish in flight finishes after the deletion (20), the unpublish after that (50).
    const evidence = sweptLife([call("ControllerPublishVolume", "vol-1", 20), call("ControllerUnpublishVolume", "vol-1", 50)]);
    expect({ broken: broken(evidence), swept: sweptByApiserver(evidence) }).toEqual({ broken: {}, swept: ["1"] });
  });

  it("catch a VA kube-apiserver deleted despite our finalizer whose volume was never unpublished, or published again", () => {
    const never = sweptLife([call("ControllerPublishVolume", "vol-1", 20)]);
    const again = sweptLife([call("ControllerPublishVolume", "vol-1", 20), call("ControllerUnpublishVolume", "vol-1", 50), call("ControllerPublishVolume", "vol-1", 55)]);
    expect({ never: broken({ ...never, published: { "vol-1": ["node-a-id"] } }), again: Object.keys(broken(again)) }).toEqual({
      never: { "every deleted VA that was published was unpublished before it vanished (after, if kube-apiserver's delete race took it), and stays unpublished": ["1: no unpublish of vol-1 after its last publish"] },
      again: [
        "every deleted VA that was published was unpublished before it vanished (after, if kube-apiserver's delete race took it), and stays unpublished",
        "no publish of a volume after the unpublish that ended its VA",
      ],
    });
  });

  it("do not excuse a VA deleted from deletionTimestamp with our finalizer on while published: that end is ours", () => {
    const evidence = goodLife();
    const journal = [call("ControllerPublishVolume", "vol-1", 20), call("ControllerUnpublishVolume", "vol-1", 65)];
    expect({ swept: sweptByApiserver({ ...evidence, journal }), broken: Object.keys(broken({ ...evidence, journal })) }).toEqual({
      swept: [],
      broken: [
        "every deleted VA that was published was unpublished before it vanished (after, if kube-apiserver's delete race took it), and stays unpublished",
        "no VA lost our finalizer while the driver still had its volume published (but to kube-apiserver's delete race)",
      ],
    });
  });

  it("catch a VA left being deleted", () => {
    const evidence = goodLife();
    const history = [change("VolumeAttachment", "4", va("4", { finalizers: [finalizer], attached: true, deleting: true }), 10)];
    expect(broken({ ...evidence, history: [...evidence.history, ...history], published: { ...evidence.published, "<no handle for PV pv-4>": ["node-a-id"] } })).toMatchObject({
      "nothing stuck: no VA or PV of ours is left being deleted": ["VolumeAttachment/4 has been deleting since 2026-01-01T00:00:00Z"],
    });
  });
});
