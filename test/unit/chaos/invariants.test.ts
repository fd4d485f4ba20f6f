import { describe, expect, it } from "bun:test";
import type { ObjectChange, StoredObject } from "../../chaos/etcd-history";
import { checkInvariants, countCalls, leftPublishedUnwatched, sweptByApiserver, type AttacherEnd, type Evidence } from "../../chaos/invariants";
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
    driverKind: "blind",
    vanishedSeen: [],
    attacherEnds: [],
  };
}

const released =
  "every deleted VA that was published was unpublished before it vanished (after, if kube-apiserver's delete race took it; with a blind driver, unless no replica that saw it vanish lived to unpublish it), and stays unpublished";
const noStray =
  "no stray unpublish (of a volume from a node the driver never had it published on) but a deleted VA's detach on its node and one per VA the delete race took that a live replica saw vanish";

/** kube-apiserver's delete race (kubernetes#77988): the VA goes from "our finalizer, publish in flight" straight to deleted at 18, no deletionTimestamp between. */
function sweptLife(journal: readonly JournalEntry[]): Evidence {
  const evidence = goodLife();
  const history = [...evidence.history.slice(0, 4), change("VolumeAttachment", "1", null, 18)];
  return { ...evidence, history, journal };
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
      [released]: ["1 vanished before vol-1 was unpublished"],
      "no VA lost our finalizer while the driver still had its volume published (but to kube-apiserver's delete race)": [`1 lost our finalizer at ${new Date(60).toISOString()} while vol-1 was published`],
    });
  });

  it("catch a publish after the unpublish that ended the VA, and the volume left published", () => {
    const evidence = goodLife();
    expect(broken({ ...evidence, journal: [...evidence.journal, call("ControllerPublishVolume", "vol-1", 55)], published: { "vol-1": ["node-a-id"] } })).toEqual({
      [released]: ["1: no unpublish of vol-1 after its last publish"],
      "no VA lost our finalizer while the driver still had its volume published (but to kube-apiserver's delete race)": [`1 lost our finalizer at ${new Date(60).toISOString()} while vol-1 was published`],
      "no publish of a volume after the unpublish that ended its VA": [`1: vol-1 was published at ${new Date(55).toISOString()}, after its final unpublish`],
    });
  });

  it("count a failed call that did the work (reply lost) as a publish", () => {
    const evidence = goodLife();
    const journal = [call("ControllerPublishVolume", "vol-1", 20, { code: "DeadlineExceeded", applied: true })];
    expect(Object.keys(broken({ ...evidence, journal }))).toEqual([released, "no VA lost our finalizer while the driver still had its volume published (but to kube-apiserver's delete race)"]);
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

  it("accept a VA kube-apiserver deleted despite our finalizer when its volume was unpublished afterwards, and name it", () => {
    // The publish in flight finishes after the deletion (20), the unpublish after that (50).
    const evidence = sweptLife([call("ControllerPublishVolume", "vol-1", 20), call("ControllerUnpublishVolume", "vol-1", 50)]);
    expect({ broken: broken(evidence), swept: sweptByApiserver(evidence) }).toEqual({ broken: {}, swept: ["1"] });
  });

  it("catch a VA kube-apiserver deleted despite our finalizer whose volume was never unpublished, or published again", () => {
    const never = sweptLife([call("ControllerPublishVolume", "vol-1", 20)]);
    const again = sweptLife([call("ControllerPublishVolume", "vol-1", 20), call("ControllerUnpublishVolume", "vol-1", 50), call("ControllerPublishVolume", "vol-1", 55)]);
    expect({ never: broken({ ...never, published: { "vol-1": ["node-a-id"] } }), again: Object.keys(broken(again)) }).toEqual({
      never: { [released]: ["1: no unpublish of vol-1 after its last publish"] },
      again: [
        released,
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
        released,
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

describe("chaos call counts", () => {
  it("counts every publish and unpublish the driver finished, whatever it answered", () => {
    const evidence = goodLife();
    const journal = [call("ControllerPublishVolume", "vol-1", 18, { code: "Unavailable" }), ...evidence.journal, call("ControllerUnpublishVolume", "vol-1", 45, { code: "Aborted" })];
    expect(countCalls({ ...evidence, journal })).toEqual({ publishes: 2, unpublishes: 2, strayUnpublishes: 0, allowed: [], detaches: 0, beyond: 0, strays: [] });
  });

  it("counts an unpublish with no earlier publish of the same volume on the same node as stray, and one on no VA's node or before its VA was marked for deletion as beyond the rule", () => {
    // The VA is marked for deletion at 5,030 here: an unpublish at 15 came long before its detach.
    const evidence = goodLife();
    const history = evidence.history.map((entry) => (entry.receivedAtMs >= 30 ? { ...entry, receivedAtMs: entry.receivedAtMs + 5_000 } : entry));
    const journal = [call("ControllerUnpublishVolume", "vol-1", 15), ...evidence.journal, call("ControllerUnpublishVolume", "vol-1", 55, { nodeId: "node-b-id" })];
    const strays = [
      `vol-1 unpublished from node-a-id at ${new Date(15).toISOString()}, where the driver never had it published (VA 1)`,
      `vol-1 unpublished from node-b-id at ${new Date(55).toISOString()}, where the driver never had it published (no VA of ours named that node)`,
    ];
    expect({ calls: countCalls({ ...evidence, history, journal }), broken: broken({ ...evidence, history, journal }) }).toEqual({
      calls: { publishes: 1, unpublishes: 3, strayUnpublishes: 2, allowed: [], detaches: 0, beyond: 2, strays },
      broken: { [noStray]: strays },
    });
  });

  it("counts a deleted VA's detach on its node after a publish the driver never applied as stray (the driver's state never had it), but within the rule, as upstream's detach", () => {
    const evidence = goodLife();
    // Marked for deletion at 30: the publish failed, the detach still unpublishes, twice after a lost reply.
    const journal = [call("ControllerPublishVolume", "vol-1", 20, { code: "Unavailable" }), call("ControllerUnpublishVolume", "vol-1", 40), call("ControllerUnpublishVolume", "vol-1", 50)];
    const detach = (atMs: number): string => `vol-1 unpublished from node-a-id at ${new Date(atMs).toISOString()}, where the driver never had it published (VA 1; its detach)`;
    expect({ calls: countCalls({ ...evidence, journal }), broken: broken({ ...evidence, journal }) }).toEqual({
      calls: { publishes: 1, unpublishes: 2, strayUnpublishes: 2, allowed: [], detaches: 2, beyond: 0, strays: [detach(40), detach(50)] },
      broken: {},
    });
  });

  it("does not count an unpublish after a publish the driver applied despite its error (reply lost, or given up past --timeout)", () => {
    const evidence = goodLife();
    const journal = [call("ControllerPublishVolume", "vol-1", 20, { code: "DeadlineExceeded", applied: true }), call("ControllerUnpublishVolume", "vol-1", 50)];
    expect(countCalls({ ...evidence, journal }).strayUnpublishes).toBe(0);
  });

  it("does not count a repeated unpublish of a volume once published there (a retry after a lost reply), nor a failed one", () => {
    const evidence = goodLife();
    const journal = [...evidence.journal, call("ControllerUnpublishVolume", "vol-1", 52), call("ControllerUnpublishVolume", "vol-2", 53, { code: "Unavailable" })];
    const result = checkInvariants({ ...evidence, journal }).find((invariant) => invariant.name === noStray);
    expect({ strays: countCalls({ ...evidence, journal }).strayUnpublishes, judged: result?.checked, violations: result?.violations }).toEqual({ strays: 0, judged: 2, violations: [] });
  });

  it("counts a detach the driver finished a moment before the history showed its VA marked for deletion as the VA's detach: the suite's watch lags the attacher's", () => {
    const evidence = goodLife();
    // Marked for deletion at 30 in the history; the detach's unpublish finished at 26.
    const journal = [call("ControllerPublishVolume", "vol-1", 20, { code: "DeadlineExceeded" }), call("ControllerUnpublishVolume", "vol-1", 26)];
    expect(countCalls({ ...evidence, journal })).toMatchObject({ strayUnpublishes: 1, detaches: 1, beyond: 0 });
  });

  it("allows one stray unpublish per VA the delete race took that a live replica saw vanish, and names the VA", () => {
    // The race took the VA before its publish was sent; the replica that saw it vanish unpublished anyway.
    const evidence = { ...sweptLife([call("ControllerUnpublishVolume", "vol-1", 50)]), vanishedSeen: [{ va: "1", by: "attacher-1" }] };
    expect({ calls: countCalls(evidence), broken: broken(evidence) }).toEqual({
      calls: {
        publishes: 0,
        unpublishes: 1,
        strayUnpublishes: 1,
        allowed: ["1"],
        detaches: 0,
        beyond: 0,
        strays: [`vol-1 unpublished from node-a-id at ${new Date(50).toISOString()}, where the driver never had it published (VA 1; allowed: the delete race took it)`],
      },
      broken: {},
    });
  });

  it("allows no second stray unpublish for the same swept VA", () => {
    const evidence = { ...sweptLife([call("ControllerUnpublishVolume", "vol-1", 50), call("ControllerUnpublishVolume", "vol-1", 51)]), vanishedSeen: [{ va: "1", by: "attacher-1" }] };
    expect(broken(evidence)).toEqual({ [noStray]: [`vol-1 unpublished from node-a-id at ${new Date(51).toISOString()}, where the driver never had it published (VA 1)`] });
  });

  it("allows no stray unpublish for a swept VA that no replica logged as vanished", () => {
    const unseen = sweptLife([call("ControllerUnpublishVolume", "vol-1", 50)]);
    expect({ broken: Object.keys(broken(unseen)), calls: countCalls(unseen) }).toMatchObject({ broken: [noStray], calls: { strayUnpublishes: 1, allowed: [], detaches: 0, beyond: 1 } });
  });

  it("counts a VA deleted the normal way under its detach, not under the delete race's allowance, even if a replica logged it as vanished", () => {
    const normal = { ...goodLife(), journal: [call("ControllerUnpublishVolume", "vol-1", 50)], vanishedSeen: [{ va: "1", by: "attacher-1" }] };
    expect({ broken: broken(normal), calls: countCalls(normal) }).toMatchObject({ broken: {}, calls: { strayUnpublishes: 1, allowed: [], detaches: 1, beyond: 0 } });
  });
});

describe("a blind driver's unwatched sweep", () => {
  const ended = (incarnation: string, atMs: number): AttacherEnd => ({ incarnation, atMs });

  /** Swept at 18 while its publish (started at 19, applied at 20) was in flight, and never unpublished: the volume stays published. */
  function leftPublished(extra: Partial<Evidence>): Evidence {
    return { ...sweptLife([call("ControllerPublishVolume", "vol-1", 20)]), published: { "vol-1": ["node-a-id"] }, ...extra };
  }

  it("excuses a swept VA left published when no replica logged it as vanished and an attacher ended between its last publish and 10 s after its deletion, and names it", () => {
    const evidence = leftPublished({ attacherEnds: [ended("attacher-1", 19), ended("attacher-2", 10_018)] });
    expect({ broken: broken(evidence), unwatched: leftPublishedUnwatched(evidence) }).toEqual({ broken: {}, unwatched: ["1"] });
  });

  it("does not excuse it when an attacher that logged the VA as vanished lived on: that replica had to unpublish", () => {
    const evidence = leftPublished({ attacherEnds: [ended("attacher-1", 25)], vanishedSeen: [{ va: "1", by: "attacher-2" }] });
    expect({ broken: broken(evidence), unwatched: leftPublishedUnwatched(evidence) }).toEqual({ broken: { [released]: ["1: no unpublish of vol-1 after its last publish"] }, unwatched: [] });
  });

  it("excuses it when every attacher that logged the VA as vanished ended within 10 s of its deletion, before its unpublish finished, and names it", () => {
    const evidence = leftPublished({ attacherEnds: [ended("attacher-1", 25), ended("attacher-2", 10_018)], vanishedSeen: [{ va: "1", by: "attacher-1" }, { va: "1", by: "attacher-2" }] });
    expect({ broken: broken(evidence), unwatched: leftPublishedUnwatched(evidence) }).toEqual({ broken: {}, unwatched: ["1"] });
  });

  it("does not excuse it when an attacher that logged the VA as vanished ended more than 10 s after its deletion: it had time to unpublish", () => {
    const evidence = leftPublished({ attacherEnds: [ended("attacher-1", 10_019)], vanishedSeen: [{ va: "1", by: "attacher-1" }] });
    expect({ broken: broken(evidence), unwatched: leftPublishedUnwatched(evidence) }).toEqual({ broken: { [released]: ["1: no unpublish of vol-1 after its last publish"] }, unwatched: [] });
  });

  it("does not excuse it when no attacher ended between its last publish and 10 s after its deletion", () => {
    const evidence = leftPublished({ attacherEnds: [ended("attacher-1", 18), ended("attacher-2", 10_019)] });
    expect({ broken: broken(evidence), unwatched: leftPublishedUnwatched(evidence) }).toEqual({ broken: { [released]: ["1: no unpublish of vol-1 after its last publish"] }, unwatched: [] });
  });

  it("does not excuse it with a listing driver: the reconciler's first pass must find the publish", () => {
    const evidence = leftPublished({ attacherEnds: [ended("attacher-1", 25)], driverKind: "listing" });
    expect({ broken: broken(evidence), unwatched: leftPublishedUnwatched(evidence) }).toEqual({ broken: { [released]: ["1: no unpublish of vol-1 after its last publish"] }, unwatched: [] });
  });

  it("does not excuse a VA deleted the normal way and left published", () => {
    const evidence = { ...goodLife(), journal: [call("ControllerPublishVolume", "vol-1", 20)], published: { "vol-1": ["node-a-id"] }, attacherEnds: [ended("attacher-1", 25)] };
    expect(leftPublishedUnwatched(evidence)).toEqual([]);
    expect(Object.keys(broken(evidence))).toContain(released);
  });
});
