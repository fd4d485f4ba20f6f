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
  /** Which driver ran: its capabilities decide what the attacher can recover. */
  readonly driverKind: DriverKind;
  /** Each time an attacher logged a VA as vanished while still carrying our finalizer: that replica saw its deletion. */
  readonly vanishedSeen: readonly VanishSighting[];
  /** Each attacher process that ended (killed by a fault, or exited by design), and when. */
  readonly attacherEnds: readonly AttacherEnd[];
}

/** VanishSighting: attacher process `by` (its incarnation's name) logged VA `va` as vanished with our finalizer on. */
export interface VanishSighting {
  readonly va: string;
  readonly by: string;
}

/** AttacherEnd: attacher process `incarnation` ended at `atMs`, in ms since the epoch. */
export interface AttacherEnd {
  readonly incarnation: string;
  readonly atMs: number;
}

/**
 * DriverKind is the fake driver's controller capabilities in a run:
 * "blind" publishes and unpublishes but cannot list where volumes are
 * published, as aws-ebs or longhorn; "listing" also has LIST_VOLUMES and
 * LIST_VOLUMES_PUBLISHED_NODES, so the attacher's reconciler runs.
 */
export const driverKinds = ["blind", "listing"] as const;
export type DriverKind = (typeof driverKinds)[number];

/** CallCounts is what the attacher cost the driver in a run, read from the driver's journal. */
export interface CallCounts {
  /** ControllerPublishVolume calls the driver finished, whatever their outcome. */
  readonly publishes: number;
  /** ControllerUnpublishVolume calls the driver finished, whatever their outcome. */
  readonly unpublishes: number;
  /** OK unpublishes of a volume from a node the driver never had it published on (see judgeUnpublishes). */
  readonly strayUnpublishes: number;
  /** VAs whose one stray unpublish the rule allows: the delete race took them and a live replica saw them vanish. */
  readonly allowed: readonly string[];
  /** Stray unpublishes that were a deleted VA's own detach, on its node, after a publish that failed or was never sent. */
  readonly detaches: number;
  /** Stray unpublishes neither allowed nor a detach: each breaks the invariant. */
  readonly beyond: number;
  /** Every stray unpublish, described. */
  readonly strays: readonly string[];
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
  /**
   * When it was first seen marked for deletion while carrying our
   * finalizer, if it was: from then its detach was ours, and a detach
   * unpublishes from its node whether or not a publish ever took effect
   * there (upstream's does too: a publish that failed or went unanswered
   * may have).
   */
  readonly markedAtMs: number | undefined;
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

/** What every judgement reads: the VA lives, each one's volume, and that volume's calls on the VA's node. */
interface Judge {
  readonly evidence: Evidence;
  readonly lives: readonly VaLife[];
  readonly calls: ReadonlyMap<string, readonly VolumeCall[]>;
  volume(life: VaLife): string;
  callsOf(life: VaLife): VolumeCall[];
}

function judge(evidence: Evidence): Judge {
  const volumeOf = volumeHandles(evidence.history);
  const calls = callsByVolume(evidence.journal);
  const volume = (life: VaLife): string => volumeOf.get(life.pvName) ?? `<no handle for PV ${life.pvName}>`;
  return {
    evidence,
    lives: vaLives(evidence),
    calls,
    volume,
    callsOf: (life) => (calls.get(volume(life)) ?? []).filter((call) => call.nodeId === evidence.nodeIdOf(life.nodeName)),
  };
}

/** The promise that a deleted VA's volume was released; a blind driver's unwatched sweeps are its only exception. */
const unpublishedBeforeGoneName =
  "every deleted VA that was published was unpublished before it vanished (after, if kube-apiserver's delete race took it; with a blind driver, unless no replica that saw it vanish lived to unpublish it), and stays unpublished";

/**
 * How long after a VA's deletion a live replica's watch surely showed it,
 * and its unpublish surely finished: an attacher that ended later had seen
 * it and had time to unpublish it.
 */
const watchSeesDeletionWithinMs = 10_000;

/**
 * How far the suite's etcd watch may lag behind an attacher that acts on
 * the same change: the history's times are when the suite received each
 * change, and an attacher that saw it through kube-apiserver may have
 * called the driver a few ms before that.
 */
const historyLagMs = 1_000;

/** checkInvariants judges the evidence against every promise and returns one result per promise. */
export function checkInvariants(evidence: Evidence): InvariantResult[] {
  const j = judge(evidence);
  const { lives, volume, callsOf, calls } = j;
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

  const unpublishedBeforeGone = check(unpublishedBeforeGoneName, deleted, (life) => {
    const broken = notReleased(j, life);
    return broken !== undefined && unwatchedSweep(j, life) ? undefined : broken;
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

  return [attached, unpublishedBeforeGone, finalizerHeld, noLatePublish, rightNode, noStrayUnpublish(j), pvFinalizersHeld(evidence), nothingStuck(evidence)];
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

/**
 * leftPublishedUnwatched names the deleted VAs a blind driver was allowed
 * to leave published (see unwatchedSweep): the documented unprotected case,
 * reported so that a run shows how often it happened.
 */
export function leftPublishedUnwatched(evidence: Evidence): string[] {
  const j = judge(evidence);
  return j.lives.filter((life) => life.last === null && notReleased(j, life) !== undefined && unwatchedSweep(j, life)).map((life) => life.name);
}

/** countCalls counts the publishes and unpublishes the driver finished and judges each OK unpublish stray or not (see judgeUnpublishes). */
export function countCalls(evidence: Evidence): CallCounts {
  const { strays } = judgeUnpublishes(judge(evidence));
  const count = (method: JournalEntry["method"]): number => evidence.journal.filter((entry) => entry.method === method).length;
  return {
    publishes: count("ControllerPublishVolume"),
    unpublishes: count("ControllerUnpublishVolume"),
    strayUnpublishes: strays.length,
    allowed: strays.flatMap((stray) => stray.allowedFor ?? []),
    detaches: strays.filter((stray) => stray.detachOf !== undefined).length,
    beyond: strays.filter(isBeyond).length,
    strays: strays.map((stray) => stray.description),
  };
}

/**
 * notReleased says why a deleted VA's volume was not released as promised:
 * its last publish was not followed by an unpublish, the unpublish came
 * after the VA vanished (allowed only when the delete race took it, since
 * then nothing could have held the VA), or the volume is still published.
 */
function notReleased({ evidence, volume, callsOf }: Judge, life: VaLife): string | undefined {
  const own = callsOf(life);
  const lastPublish = own.filter((call) => call.method === "ControllerPublishVolume" && call.applied).at(-1);
  if (lastPublish === undefined) return undefined;
  const unpublish = own.find((call) => call.method === "ControllerUnpublishVolume" && call.ok && call.finishedAtMs >= lastPublish.finishedAtMs);
  if (unpublish === undefined) return `${life.name}: no unpublish of ${volume(life)} after its last publish`;
  if (unpublish.finishedAtMs > (life.goneAtMs ?? 0) && !life.swept) return `${life.name} vanished before ${volume(life)} was unpublished`;
  if ((evidence.published[volume(life)] ?? []).includes(evidence.nodeIdOf(life.nodeName))) return `${life.name} is gone but ${volume(life)} is still published`;
  return undefined;
}

/**
 * unwatchedSweep: with a blind driver a restart or leader change recovers
 * nothing, because no PV of ours tells a publish lost to the delete race
 * apart from a volume detached normally. Only the replica that saw the VA
 * vanish knows to unpublish it, and only in memory. So a VA the race took
 * may stay published when no replica lived to unpublish it:
 * - no attacher logged it as vanished, and an attacher process ended
 *   between its last publish and a while after the deletion (the replica
 *   that published it died before its watch showed the deletion); or
 * - every attacher that logged it as vanished ended in that same window
 *   (killed before its unpublish finished, as the fault that kills the
 *   attacher during ControllerUnpublishVolume may do).
 * Anything else is still broken: a replica that saw the VA vanish and lived
 * on had to unpublish it. A listing driver has no such case, as its
 * reconciler finds the publish.
 */
function unwatchedSweep({ evidence, callsOf }: Judge, life: VaLife): boolean {
  if (evidence.driverKind !== "blind" || !life.swept || life.goneAtMs === undefined) return false;
  const lastPublish = callsOf(life).filter((call) => call.method === "ControllerPublishVolume" && call.applied).at(-1);
  if (lastPublish === undefined) return false;
  const until = life.goneAtMs + watchSeesDeletionWithinMs;
  const endedInWindow = (end: AttacherEnd): boolean => end.atMs >= lastPublish.startedAtMs && end.atMs <= until;
  const witnesses = evidence.vanishedSeen.filter((sighting) => sighting.va === life.name).map((sighting) => sighting.by);
  if (witnesses.length === 0) return evidence.attacherEnds.some(endedInWindow);
  return witnesses.every((witness) => evidence.attacherEnds.some((end) => end.incarnation === witness && endedInWindow(end)));
}

/** One OK unpublish of a volume from a node the driver never had it published on. */
interface StrayUnpublish {
  readonly description: string;
  /** The VA whose one stray the rule allows, when this is that one. */
  readonly allowedFor: string | undefined;
  /** The deleted VA whose own detach this was, when it was one. */
  readonly detachOf: string | undefined;
}

/** isBeyond: a stray unpublish that the rule does not allow. */
const isBeyond = (stray: StrayUnpublish): boolean => stray.allowedFor === undefined && stray.detachOf === undefined;

/**
 * judgeUnpublishes finds the stray unpublishes: OK ControllerUnpublishVolume
 * calls of a volume and node ID for which the journal has no publish of the
 * same pair that the driver applied (whatever it answered: a lost reply or
 * a call given up past --timeout may still have changed its state) and that
 * started before the unpublish finished. Two kinds are the rule's:
 * - a deleted VA's own detach on its node, once the VA was marked for
 *   deletion with our finalizer on: as upstream's, it unpublishes
 *   whether or not a publish took effect, since one that failed, timed out
 *   or died with its attacher may have (as many as the detach is retried);
 * - one per VA kube-apiserver's delete race took that a live replica saw
 *   vanish: the attacher unpublishes its volume from its node without
 *   knowing whether the publish was ever sent.
 * Any other is beyond the rule. `judged` counts the OK unpublishes.
 */
function judgeUnpublishes({ evidence, lives, volume, calls }: Judge): { judged: number; strays: StrayUnpublish[] } {
  const pair = (volumeId: string, nodeId: string): string => `${volumeId} on ${nodeId}`;
  const pairOf = (life: VaLife): string => pair(volume(life), evidence.nodeIdOf(life.nodeName));
  const vasOf = new Map<string, VaLife[]>();
  for (const life of lives) vasOf.set(pairOf(life), [...(vasOf.get(pairOf(life)) ?? []), life]);
  // The VAs that may each cost one stray unpublish, until they have.
  const allowance = new Map(lives.filter((life) => life.swept && evidence.vanishedSeen.some((sighting) => sighting.va === life.name)).map((life) => [pairOf(life), life.name]));
  let judged = 0;
  const strays: StrayUnpublish[] = [];
  for (const [volumeId, list] of calls) {
    for (const unpublish of list) {
      if (unpublish.method !== "ControllerUnpublishVolume" || !unpublish.ok) continue;
      judged++;
      const key = pair(volumeId, unpublish.nodeId);
      const published = list.some((call) => call.method === "ControllerPublishVolume" && call.applied && call.nodeId === unpublish.nodeId && call.startedAtMs <= unpublish.finishedAtMs);
      if (published) continue;
      const allowedFor = allowance.get(key);
      allowance.delete(key);
      const vas = vasOf.get(key) ?? [];
      const detachOf = allowedFor === undefined ? vas.find((life) => life.markedAtMs !== undefined && life.markedAtMs - historyLagMs <= unpublish.finishedAtMs)?.name : undefined;
      const why = allowedFor !== undefined ? "; allowed: the delete race took it" : detachOf !== undefined ? "; its detach" : "";
      strays.push({
        description: `${volumeId} unpublished from ${unpublish.nodeId} at ${new Date(unpublish.finishedAtMs).toISOString()}, where the driver never had it published (${vas.length === 0 ? "no VA of ours named that node" : `VA ${vas.map((life) => life.name).join(", ")}`}${why})`,
        allowedFor,
        detachOf,
      });
    }
  }
  return { judged, strays };
}

/** noStrayUnpublish holds the attacher to its rule: no unpublish where the driver never had the volume, but a deleted VA's detach and one per VA the delete race took. */
function noStrayUnpublish(j: Judge): InvariantResult {
  const { judged, strays } = judgeUnpublishes(j);
  return {
    name: "no stray unpublish (of a volume from a node the driver never had it published on) but a deleted VA's detach on its node and one per VA the delete race took that a live replica saw vanish",
    checked: judged,
    violations: strays.filter(isBeyond).map((stray) => stray.description),
  };
}

/** vaLives replays the history into one life per VA of our driver (names are never reused by the churn). */
function vaLives(evidence: Evidence): VaLife[] {
  const lives = new Map<string, { name: string; nodeName: string; pvName: string; last: StoredObject | null; goneAtMs: number | undefined; finalizerLostAtMs: number[]; swept: boolean; markedAtMs: number | undefined }>();
  const marked = (object: StoredObject | null): boolean => hasFinalizer(object, evidence.finalizer) && object?.metadata.deletionTimestamp !== undefined;
  for (const change of evidence.history) {
    if (change.kind !== "VolumeAttachment") continue;
    const previous = lives.get(change.name);
    const object = change.object;
    if (object !== null && object.spec?.attacher !== evidence.driverName) continue;
    if (object !== null && previous === undefined) {
      lives.set(change.name, { name: change.name, nodeName: object.spec?.nodeName ?? "", pvName: object.spec?.source?.persistentVolumeName ?? "", last: object, goneAtMs: undefined, finalizerLostAtMs: [], swept: false, markedAtMs: marked(object) ? change.receivedAtMs : undefined });
      continue;
    }
    if (previous === undefined) continue;
    if (hasFinalizer(previous.last, evidence.finalizer) && !hasFinalizer(object, evidence.finalizer)) previous.finalizerLostAtMs.push(change.receivedAtMs);
    if (object === null && hasFinalizer(previous.last, evidence.finalizer) && previous.last?.metadata.deletionTimestamp === undefined) previous.swept = true;
    if (marked(object)) previous.markedAtMs ??= change.receivedAtMs;
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
