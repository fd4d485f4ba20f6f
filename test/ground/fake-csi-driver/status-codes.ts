// gRPC status codes by name, for scripts and the call log. The numbers are
// the wire protocol's (grpc/doc/statuscodes.md), so this file needs no gRPC
// library and the control client can import it without pulling grpc-js in.

/**
 * STATUS_CODE_NAMES lists gRPC status code names, indexed by code, spelled as
 * Go's `codes.Code.String()` spells them ("DeadlineExceeded"), because that
 * is how the upstream attacher's logs and tests name them.
 */
export const STATUS_CODE_NAMES = [
  "OK",
  "Canceled",
  "Unknown",
  "InvalidArgument",
  "DeadlineExceeded",
  "NotFound",
  "AlreadyExists",
  "PermissionDenied",
  "ResourceExhausted",
  "FailedPrecondition",
  "Aborted",
  "OutOfRange",
  "Unimplemented",
  "Internal",
  "Unavailable",
  "DataLoss",
  "Unauthenticated",
] as const;

/** StatusCodeName is one canonical gRPC status code name, e.g. "Unavailable". */
export type StatusCodeName = (typeof STATUS_CODE_NAMES)[number];

/**
 * StatusCodeInput is how a script may name a status code: a canonical name,
 * the same name in another spelling ("UNAVAILABLE", "deadline_exceeded",
 * "Cancelled"), or the number, so tests can copy whatever their source uses.
 */
export type StatusCodeInput = StatusCodeName | string | number;

/** Code numbers by folded name: lower case, underscores dropped. */
const CODES_BY_FOLDED_NAME = new Map<string, number>([
  ...STATUS_CODE_NAMES.map((name, code): [string, number] => [foldName(name), code]),
  // grpc-js, Connect and the gRPC docs spell code 1 the British way.
  ["cancelled", 1],
]);

/**
 * parseStatusCode turns a StatusCodeInput into its code number, or returns
 * undefined when it names no gRPC status code, so the control API can
 * reject a typo when the script is posted rather than when the call comes.
 */
export function parseStatusCode(input: unknown): number | undefined {
  if (typeof input === "number") {
    return Number.isInteger(input) && input >= 0 && input < STATUS_CODE_NAMES.length ? input : undefined;
  }
  if (typeof input === "string") {
    return CODES_BY_FOLDED_NAME.get(foldName(input));
  }
  return undefined;
}

/**
 * statusCodeName gives the canonical name of a code number; numbers outside
 * the table (which no script can produce) read as "Unknown", as gRPC
 * clients treat them.
 */
export function statusCodeName(code: number): StatusCodeName {
  return STATUS_CODE_NAMES[code] ?? "Unknown";
}

function foldName(name: string): string {
  return name.replaceAll("_", "").toLowerCase();
}
