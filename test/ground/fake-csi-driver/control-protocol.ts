// The control API's wire format: what tests post to the fake driver and what
// it answers. Both the control server (inside the driver process) and the
// control client (inside the test process) import this file, so it holds
// only valibot schemas and types; nothing here touches gRPC.
import type { JsonValue } from "@bufbuild/protobuf";
import * as v from "valibot";
import { parseStatusCode, type StatusCodeInput, type StatusCodeName } from "./status-codes";

/**
 * CSI_METHOD_NAMES lists the CSI RPCs the fake driver serves, by their proto
 * method names, which is how scripts and the call log name them.
 */
export const CSI_METHOD_NAMES = [
  "GetPluginInfo",
  "GetPluginCapabilities",
  "Probe",
  "ControllerGetCapabilities",
  "ControllerPublishVolume",
  "ControllerUnpublishVolume",
  "ListVolumes",
  "CreateVolume",
  "DeleteVolume",
] as const;

/** CsiMethodName is one CSI RPC served by the fake driver, e.g. "Probe". */
export type CsiMethodName = (typeof CSI_METHOD_NAMES)[number];

/** isCsiMethodName tells whether a string names a method the fake driver serves. */
export function isCsiMethodName(name: string): name is CsiMethodName {
  return CSI_METHOD_NAMES.some((known) => known === name);
}

/**
 * CsiMethodNameSchema validates a method name so that a script for a
 * misspelt method fails when posted instead of silently never matching.
 */
export const CsiMethodNameSchema = v.picklist(CSI_METHOD_NAMES);

/**
 * ScriptedAnswerSchema validates one scripted answer. A call takes the first
 * answer queued for its method (and, if the answer names one, its volume),
 * waits `delayMs`, then waits to be released if `hang`, then fails with
 * `code` or succeeds with the normal response patched by `response`.
 */
export const ScriptedAnswerSchema = v.strictObject({
  /** Status to fail with; default OK (succeed). A name ("Unavailable") or a number (14). */
  code: v.optional(
    v.custom<StatusCodeInput>((input) => parseStatusCode(input) !== undefined, "not a gRPC status code"),
  ),
  /** Status message sent with a failure; default "scripted <code> for <method>". */
  message: v.optional(v.string()),
  /**
   * Status details sent with a failure, in the `grpc-status-details-bin`
   * trailer as google.rpc.Status does: each an Any of message type `type`
   * (e.g. "google.rpc.ErrorInfo") whose serialized bytes are `value`, in
   * base64. Default none (no such trailer). Ignored without `code`.
   */
  details: v.optional(v.array(v.strictObject({ type: v.pipe(v.string(), v.minLength(1)), value: v.pipe(v.string(), v.base64()) }))),
  /** Milliseconds to wait before answering; default 0. */
  delayMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  /** Hold the call until POST /release lets it go; default false. */
  hang: v.optional(v.boolean()),
  /**
   * Top-level response fields (proto3 JSON) that replace the normal
   * response's; `null` clears a field, e.g. `{ ready: null }` for Probe.
   * Default: the normal response unchanged.
   */
  response: v.optional(v.record(v.string(), v.custom<JsonValue>(isJsonValue, "not a JSON value"))),
  /**
   * Run the normal behaviour (e.g. record the publication) even though the
   * call fails with `code`, as a driver that finished the work but lost the
   * reply does; default false (a failed call changes nothing).
   */
  apply: v.optional(v.boolean()),
  /**
   * After the delay and hang, close every client connection to the CSI
   * socket without answering, as a driver whose gRPC server drops its
   * sessions does (the process lives on and accepts new connections);
   * default false. `code` and `response` are then ignored.
   */
  disconnect: v.optional(v.boolean()),
  /** How many calls this answer serves before it is used up; default 1. */
  times: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  /** Serve every matching call from now on (ignores `times`); default false. */
  always: v.optional(v.boolean()),
  /** Only calls for this volume id match (CreateVolume: its name); default any call. */
  volumeId: v.optional(v.string()),
});

/** ScriptedAnswer is one answer as a test writes it. */
export type ScriptedAnswer = v.InferInput<typeof ScriptedAnswerSchema>;

/** ScriptRequestSchema validates the body of POST /script. */
export const ScriptRequestSchema = v.strictObject({
  method: CsiMethodNameSchema,
  answers: v.array(ScriptedAnswerSchema),
});

/** ReleaseRequestSchema validates the body of POST /release. */
export const ReleaseRequestSchema = v.strictObject({
  /** Only release calls of this method; default all held calls. */
  method: v.optional(CsiMethodNameSchema),
});

/** SeedVolumeSchema validates the body of POST /volumes. */
export const SeedVolumeSchema = v.strictObject({
  volumeId: v.pipe(v.string(), v.minLength(1)),
  /** Capacity reported by ListVolumes; default 1 GiB. */
  capacityBytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  /** Nodes the volume is already published to; default none. */
  nodeIds: v.optional(v.array(v.string())),
});

/** SeedVolume puts a volume in the table without a CSI call, e.g. one attached before a restart. */
export type SeedVolume = v.InferInput<typeof SeedVolumeSchema>;

/** PublicationSchema validates the body of POST /publications and POST /publications/forget. */
export const PublicationSchema = v.strictObject({
  volumeId: v.pipe(v.string(), v.minLength(1)),
  nodeId: v.pipe(v.string(), v.minLength(1)),
});

/**
 * Publication is one volume published to one node, changed behind the
 * attacher's back: the back end detached it on its own, or someone attached
 * it by hand.
 */
export type Publication = v.InferInput<typeof PublicationSchema>;

/**
 * CallRecord is one entry of the call log: the request as proto3 JSON with
 * secrets included (tests assert on them), and `code` / `finishedAt` null
 * while the call is still running (held, delayed, or in the handler).
 */
export interface CallRecord {
  /** Position in the log, from 1; never reused, not even after a clear. */
  readonly seq: number;
  readonly method: CsiMethodName;
  readonly request: Record<string, unknown>;
  readonly code: StatusCodeName | null;
  /** Status message of a failed call; null on success or while running. */
  readonly message: string | null;
  /** ISO 8601 timestamps. */
  readonly startedAt: string;
  readonly finishedAt: string | null;
}

/** HungCall is a call held by a `hang` answer, waiting for POST /release. */
export interface HungCall {
  readonly seq: number;
  readonly method: CsiMethodName;
}

/** Health is the answer of GET /healthz. */
export interface Health {
  readonly ok: true;
  readonly pid: number;
  readonly name: string;
}

/** ControlErrorBody is what the control server answers with a 4xx or 5xx. */
export interface ControlErrorBody {
  readonly error: string;
}

/**
 * isJsonValue tells whether a value is plain JSON. Bodies arrive through
 * JSON.parse, so this only fails for values built in-process (a Date, a
 * bigint) by a test that skipped the wire; protobuf-es needs real JSON.
 */
export function isJsonValue(value: unknown): value is JsonValue {
  if (value === null || typeof value === "string" || typeof value === "boolean") {
    return true;
  }
  if (typeof value === "number") {
    return Number.isFinite(value);
  }
  if (Array.isArray(value)) {
    return value.every(isJsonValue);
  }
  if (typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.values(value).every(isJsonValue);
  }
  return false;
}
