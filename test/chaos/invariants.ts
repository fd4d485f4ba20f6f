/**
 * The promises the attacher keeps under any fault, checked after the fact
 * from two witnesses that the faults cannot touch: etcd's history of every
 * VA and PV (revision-ordered) and the driver's journal of every call it
 * finished. Pure functions: the suite gathers the evidence, these judge it.
 */
import type { JournalEntry } from "../ground/fake-csi-driver/state-dir";
import type { ObjectChange, StoredObject } from "./etcd-history";

export interface Evidence {
  /** etcd's changes to VAs and PVs, in revision order. */
  readonly history: readonly ObjectChange[];
  /** Every call the driver finished, across its restarts. */
  readonly journal: readonly JournalEntry[];
  /** The driver's volume table at the end: volume -> nodes it is published to. */
  readonly published: Readonly<Record<string, readonly string[]>>;
  /** The driver name: VAs of other attachers are not ours to judge. */
  readonly driverName: string;
  /** Our finalizer, on VAs and PVs. */
  readonly finalizer: string;
  /** The node ID the driver registered for a node. */
  readonly nodeIdOf: (nodeName: string) => string;
}

/** InvariantResult is one promise, how many cases it was checked on, and every case that broke it. */
export interface InvariantResult {
  readonly name: string;
  readonly checked: number;
  readonly violations: readonly string[];
}

/** One VA's life, gathered from the history. */
interface VaLife {
  readonly name: string;
  readonly nodeName: string;
  readonly pvName: string;
  /** The last stored version, or null once deleted. */
  readonly last: StoredObject | null;
  /** When its deletion from etcd was seen; undefined while it exists. */
  readonly goneAtMs: number | undefined;
  /** When it lost our finalizer (deletion included), each time it did. */
  readonly finalizerLostAtMs: readonly number[];
  /**
   * kube-apiserver deleted it outright while it carried our finalizer and
   * had no deletionTimestamp: its DELETE raced our finalizer patch
   * (kubernetes/kubernetes#77988). No attacher can keep the finalizer then;
   * ours must still unpublish afterwards.
   */
  readonly swept: boolean;
}

interface VolumeCall {
  readonly method: "ControllerPublishVolume" | "ControllerUnpublishVolume";
  readonly nodeId: string;
  readonly ok: boolean;
  readonly applied: boolean;
  readonly startedAtMs: number;
  readonly finishedAtMs: number;
}

const hasFinalizer = (object: StoredObject | null, finalizer: string): boolean => object?.metadata.finalizers?.includes(finalizer) ?? false;

/** checkInvariants judges the evidence against every promise and returns one result per promise. */
export function checkInvariants(evidence: Evidence): InvariantResult[] {
  const lives = vaLives(evidence);
  const volumeOf = volumeHandles(evidence.history);
  const calls = callsByVolume(evidence.journal);
  const volume = (life: VaLife): string => volumeOf.get(life.pvName) ?? `<no handle for PV ${life.pvName}>`;
  const callsOf = (life: VaLife): VolumeCall[] => (calls.get(volume(life)) ?? []).filter((call) => call.nodeId === evidence.nodeIdOf(life.nodeName));
  const existing = lives.filter((life) => life.last !== null);
  const deleted = lives.filter((life) => life.last === null);

  const attached = check("every existing VA is attached, keeps our finalizer, and is published on its node ID", existing, (life) => {
    const nodeId = evidence.nodeIdOf(life.nodeName);
    const published = evidence.published[volume(life)] ?? [];
    if (life.last?.status?.attached !== true) return `${life.name} is not attached`;
    if (!hasFinalizer(life.last, evidence.finalizer)) return `${life.name} is attached without our finalizer`;
    if (!published.includes(nodeId)) return `${life.name}: the driver has ${volume(life)} on [${published.join(", ")}], not ${nodeId}`;
    return undefined;
  });

  const unpublishedBeforeGone = check("every deleted VA that was published was unpublished before it vanished (after, if kube-apiserver's delete race took it), and stays unpublished", deleted, (life) => {
    const own = callsOf(life);
    const lastPublish = own.filter((call) => call.method === "ControllerPublishVolume" && call.applied).at(-1);
    if (lastPublish === undefined) return undefined;
    const unpublish = own.find((call) => call.method === "ControllerUnpublishVolume" && call.ok && call.finishedAtMs >= lastPublish.finishedAtMs);
    if (unpublish === undefined) return `${life.name}: no unpublish of ${volume(life)} after its last publish`;
    if (unpublish.finishedAtMs > (life.goneAtMs ?? 0) && !life.swept) return `${life.name} vanished before ${volume(life)} was unpublished`;
    if ((evidence.published[volume(life)] ?? []).includes(evidence.nodeIdOf(life.nodeName))) return `${life.name} is gone but ${volume(life)} is still published`;
    return undefined;
  });

  const finalizerHeld = check("no VA lost our finalizer while the driver still had its volume published (but to kube-apiserver's delete race)", lives.filter((life) => life.finalizerLostAtMs.length > 0), (life) => {
    // The race's loss is the deletion itself, the last loss of a swept life.
    const losses = life.swept ? life.finalizerLostAtMs.slice(0, -1) : life.finalizerLostAtMs;
    for (const lostAt of losses) {
      const stateChanges = callsOf(life).filter((call) => call.applied && call.finishedAtMs <= lostAt);
      if (stateChanges.at(-1)?.method === "ControllerPublishVolume") return `${life.name} lost our finalizer at ${new Date(lostAt).toISOString()} while ${volume(life)} was published`;
    }
    return undefined;
  });

  const noLatePublish = check("no publish of a volume after the unpublish that ended its VA", deleted, (life) => {
    const own = callsOf(life);
    // A swept VA's ending unpublish comes after it vanished.
    const endedBy = life.swept ? Number.POSITIVE_INFINITY : (life.goneAtMs ?? 0);
    const ending = own.filter((call) => call.method === "ControllerUnpublishVolume" && call.ok && call.finishedAtMs <= endedBy).at(-1);
    if (ending === undefined) return undefined;
    const late = own.find((call) => call.method === "ControllerPublishVolume" && call.applied && call.finishedAtMs > ending.finishedAtMs);
    return late === undefined ? undefined : `${life.name}: ${volume(life)} was published at ${new Date(late.finishedAtMs).toISOString()}, after its final unpublish`;
  });

  const rightNode = check("every publish went to the node ID of its VA's node", lives, (life) => {
    const stray = (calls.get(volume(life)) ?? []).find((call) => call.method === "ControllerPublishVolume" && call.nodeId !== evidence.nodeIdOf(life.nodeName));
    return stray === undefined ? undefined : `${volume(life)} was published to ${stray.nodeId}, but ${life.name} is on ${life.nodeName}`;
  });

  return [attached, unpublishedBeforeGone, finalizerHeld, noLatePublish, rightNode, pvFinalizersHeld(evidence), nothingStuck(evidence)];
}

/** check runs `violation` on every case; undefined means the case keeps the promise. */
function check<T>(name: string, cases: readonly T[], violation: (item: T) => string | undefined): InvariantResult {
  return { name, checked: cases.length, violations: cases.flatMap((item) => violation(item) ?? []) };
}

/** sweptByApiserver names the VAs kube-apiserver deleted despite our finalizer (kubernetes#77988): the suite reports them. */
export function sweptByApiserver(evidence: Evidence): string[] {
  return vaLives(evidence)
    .filter((life) => life.swept)
    .map((life) => life.name);
}

/** vaLives replays the history into one life per VA of our driver (names are never reused by the churn). */
function vaLives(evidence: Evidence): VaLife[] {
  const lives = new Map<string, { name: string; nodeName: string; pvName: string; last: StoredObject | null; goneAtMs: number | undefined; finalizerLostAtMs: number[]; swept: boolean }>();
  for (const change of evidence.history) {
    if (change.kind !== "VolumeAttachment") continue;
    const previous = lives.get(change.name);
    const object = change.object;
    if (object !== null && object.spec?.attacher !== evidence.driverName) continue;
    if (object !== null && previous === undefined) {
      lives.set(change.name, { name: change.name, nodeName: object.spec?.nodeName ?? "", pvName: object.spec?.source?.persistentVolumeName ?? "", last: object, goneAtMs: undefined, finalizerLostAtMs: [], swept: false });
      continue;
    }
    if (previous === undefined) continue;
    if (hasFinalizer(previous.last, evidence.finalizer) && !hasFinalizer(object, evidence.finalizer)) previous.finalizerLostAtMs.push(change.receivedAtMs);
    if (object === null && hasFinalizer(previous.last, evidence.finalizer) && previous.last?.metadata.deletionTimestamp === undefined) previous.swept = true;
    previous.last = object;
    if (object === null) previous.goneAtMs = change.receivedAtMs;
  }
  return [...lives.values()];
}

/** volumeHandles maps each PV ever seen to its CSI volume handle. */
function volumeHandles(history: readonly ObjectChange[]): Map<string, string> {
  const handles = new Map<string, string>();
  for (const change of history) {
    const handle = change.object?.spec?.csi?.volumeHandle;
    if (change.kind === "PersistentVolume" && handle !== undefined) handles.set(change.name, handle);
  }
  return handles;
}

/** callsByVolume groups the publish and unpublish calls by volume, in the order they finished. */
function callsByVolume(journal: readonly JournalEntry[]): Map<string, VolumeCall[]> {
  const byVolume = new Map<string, VolumeCall[]>();
  for (const entry of journal) {
    if (entry.method !== "ControllerPublishVolume" && entry.method !== "ControllerUnpublishVolume") continue;
    const volumeId = String(entry.request["volumeId"] ?? "");
    const call: VolumeCall = {
      method: entry.method,
      nodeId: String(entry.request["nodeId"] ?? ""),
      ok: entry.code === "OK",
      applied: entry.applied,
      startedAtMs: Date.parse(entry.startedAt),
      finishedAtMs: Date.parse(entry.finishedAt ?? entry.startedAt),
    };
    byVolume.set(volumeId, [...(byVolume.get(volumeId) ?? []), call]);
  }
  for (const list of byVolume.values()) list.sort((a, b) => a.finishedAtMs - b.finishedAtMs);
  return byVolume;
}

/** pvFinalizersHeld: replaying the history in revision order, a PV never loses our finalizer while any VA names it. */
function pvFinalizersHeld(evidence: Evidence): InvariantResult {
  const vaUsers = new Map<string, string>();
  const pvs = new Map<string, StoredObject | null>();
  const violations: string[] = [];
  let checked = 0;
  for (const change of evidence.history) {
    if (change.kind === "VolumeAttachment") {
      const pvName = change.object?.spec?.source?.persistentVolumeName;
      if (change.object === null || pvName === undefined) vaUsers.delete(change.name);
      else vaUsers.set(change.name, pvName);
      continue;
    }
    const previous = pvs.get(change.name) ?? null;
    pvs.set(change.name, change.object);
    if (!hasFinalizer(previous, evidence.finalizer) || hasFinalizer(change.object, evidence.finalizer)) continue;
    checked++;
    const users = [...vaUsers].filter(([, pvName]) => pvName === change.name).map(([va]) => va);
    if (users.length > 0) violations.push(`PV ${change.name} lost our finalizer at revision ${change.revision} while ${users.join(", ")} named it`);
  }
  return { name: "no PV lost our finalizer while a VA named it", checked, violations };
}

/** nothingStuck: at the end no VA or PV of ours is left half-deleted. */
function nothingStuck(evidence: Evidence): InvariantResult {
  const last = new Map<string, StoredObject | null>();
  for (const change of evidence.history) last.set(`${change.kind}/${change.name}`, change.object);
  const ours = [...last].filter(([, object]) => object !== null && (object.spec?.attacher === evidence.driverName || hasFinalizer(object, evidence.finalizer)));
  return check("nothing stuck: no VA or PV of ours is left being deleted", ours, ([key, object]) =>
    object?.metadata.deletionTimestamp === undefined ? undefined : `${key} has been deleting since ${object.metadata.deletionTimestamp}`,
  );
}
