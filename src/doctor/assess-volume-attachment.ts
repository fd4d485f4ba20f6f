import { formatAge } from "./format-age";

/**
 * What the doctor knows of one VolumeAttachment, gathered from the API
 * objects before any judgement is made.
 */
export interface VolumeAttachmentFacts {
  readonly name: string;
  readonly nodeName: string;
  /** The PV named in spec.source; undefined for an inline volume. */
  readonly pvName: string | undefined;
  readonly attached: boolean;
  readonly attachError: string | undefined;
  readonly detachError: string | undefined;
  /** metadata.creationTimestamp in ms since the epoch. */
  readonly createdAtMs: number;
  /** metadata.deletionTimestamp in ms since the epoch, once the VA is being deleted. */
  readonly deletingSinceMs: number | undefined;
  /** The driver's volume ID, or why it could not be found (a missing PV, say). */
  readonly volume: { readonly handle: string } | { readonly unknown: string };
  /** The node ID the driver registered for the node, or why it is not known. */
  readonly node: { readonly id: string } | { readonly unknown: string };
}

/**
 * The one-word verdict on a VA. "attached", "attaching" and "detaching" are
 * healthy; the rest are problems the doctor exits non-zero for.
 */
export type VolumeAttachmentState = "attached" | "attaching" | "detaching" | "attach-failed" | "detach-failed" | "stuck" | "drifted";

/**
 * Whether the driver's published nodes agree with `status.attached`:
 * "unchecked" when the driver cannot list them, "unknown" when the volume or
 * node ID could not be worked out.
 */
export type DriverAgreement = "agrees" | "disagrees" | "unchecked" | "unknown";

/** VolumeAttachmentHealth is one row of the doctor's report. */
export interface VolumeAttachmentHealth {
  readonly name: string;
  readonly node: string;
  /** The PV's name, or "(inline)" for an inline volume. */
  readonly pv: string;
  readonly attached: boolean;
  /** status.detachError while detaching, else status.attachError; "" when none. */
  readonly error: string;
  readonly ageMs: number;
  readonly state: VolumeAttachmentState;
  readonly driver: DriverAgreement;
  /** Why the driver column says what it says, or why the state is a problem; "" when healthy. */
  readonly detail: string;
  readonly problem: boolean;
}

/** What {@link assessVolumeAttachment} judges against. */
export interface AssessmentContext {
  readonly nowMs: number;
  /** Attaching or detaching longer than this with no error is stuck. */
  readonly stuckAfterMs: number;
  /** Volume ID to the node IDs the driver has it published to; undefined when the driver cannot list them. */
  readonly published: ReadonlyMap<string, readonly string[]> | undefined;
}

/**
 * assessVolumeAttachment turns one VA's facts into a row: its state, whether
 * the driver agrees, and whether that is a problem. An error outranks being
 * stuck, and a disagreeing driver outranks everything (the status then lies,
 * whatever it says).
 */
export function assessVolumeAttachment(facts: VolumeAttachmentFacts, context: AssessmentContext): VolumeAttachmentHealth {
  const deleting = facts.deletingSinceMs !== undefined;
  const error = deleting ? (facts.detachError ?? facts.attachError ?? "") : (facts.attachError ?? "");
  const ageMs = Math.max(0, context.nowMs - facts.createdAtMs);
  const agreement = driverAgreement(facts, context.published);

  let state: VolumeAttachmentState;
  let detail = "";
  const waitingMs = deleting ? context.nowMs - (facts.deletingSinceMs ?? context.nowMs) : ageMs;
  if (agreement.driver === "disagrees") {
    state = "drifted";
  } else if (deleting && facts.detachError !== undefined) {
    state = "detach-failed";
  } else if (!deleting && facts.attachError !== undefined) {
    state = "attach-failed";
  } else if (!deleting && facts.attached) {
    state = "attached";
  } else if (waitingMs > context.stuckAfterMs) {
    state = "stuck";
    detail = `${deleting ? "detaching" : "attaching"} for ${formatAge(waitingMs)} with no error`;
  } else {
    state = deleting ? "detaching" : "attaching";
  }
  if (agreement.detail !== "") detail = detail === "" ? agreement.detail : `${detail}; ${agreement.detail}`;

  return {
    name: facts.name,
    node: facts.nodeName,
    pv: facts.pvName ?? "(inline)",
    attached: facts.attached,
    error,
    ageMs,
    state,
    driver: agreement.driver,
    detail,
    problem: state !== "attached" && state !== "attaching" && state !== "detaching",
  };
}

function driverAgreement(facts: VolumeAttachmentFacts, published: ReadonlyMap<string, readonly string[]> | undefined): { driver: DriverAgreement; detail: string } {
  if (published === undefined) return { driver: "unchecked", detail: "" };
  if ("unknown" in facts.volume) return { driver: "unknown", detail: facts.volume.unknown };
  if ("unknown" in facts.node) return { driver: "unknown", detail: facts.node.unknown };
  const nodeId = facts.node.id;
  const publishedThere = (published.get(facts.volume.handle) ?? []).includes(nodeId);
  if (publishedThere === facts.attached) return { driver: "agrees", detail: "" };
  return {
    driver: "disagrees",
    detail: publishedThere
      ? `driver has volume ${facts.volume.handle} published to node ID ${nodeId}, status says not attached`
      : `driver does not have volume ${facts.volume.handle} published to node ID ${nodeId}, status says attached`,
  };
}
