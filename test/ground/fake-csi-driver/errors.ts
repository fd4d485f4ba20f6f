// Errors of the fake driver. Handlers throw CsiStatusError; the gRPC wiring
// turns it into a status, and the call log records its code.
import { statusCodeName, type StatusCodeName } from "./status-codes";
import type { StatusDetail } from "./status-details";

/** Status code numbers the normal behaviour answers with (wire values). */
export const Code = {
  Canceled: 1,
  Internal: 13,
  InvalidArgument: 3,
  NotFound: 5,
  FailedPrecondition: 9,
  Aborted: 10,
  Unimplemented: 12,
  Unavailable: 14,
} as const;

/**
 * CsiStatusError is a CSI call's failure with a gRPC status code, thrown by
 * the normal behaviour (NotFound for an unknown node) and by scripted
 * answers alike, so every failure reaches the client and the log the same way.
 */
export class CsiStatusError extends Error {
  override name = "CsiStatusError";

  constructor(
    /** gRPC status code number. */
    readonly code: number,
    message: string,
    options?: ErrorOptions,
    /** Status details sent with the status; default none. */
    readonly details: readonly StatusDetail[] = [],
  ) {
    super(message, options);
  }

  /**
   * from converts anything a handler threw: a CsiStatusError passes through,
   * anything else is a bug in the fake driver and becomes Internal, so the
   * client sees a status instead of grpc-js's generic "Unknown error".
   */
  static from(reason: unknown): CsiStatusError {
    if (reason instanceof CsiStatusError) {
      return reason;
    }
    const message = reason instanceof Error ? reason.message : String(reason);
    return new CsiStatusError(Code.Internal, `fake driver error: ${message}`, { cause: reason });
  }

  /** codeName is the canonical name of the code, as the call log shows it. */
  get codeName(): StatusCodeName {
    return statusCodeName(this.code);
  }
}

/**
 * ControlRequestError is a control API request the fake driver refused or
 * failed, with the HTTP status and the driver's own explanation, so a test
 * with a bad script fails with the reason rather than a bare 400.
 */
export class ControlRequestError extends Error {
  override name = "ControlRequestError";

  constructor(
    /** Request line, e.g. "POST /script". */
    readonly request: string,
    /** HTTP status of the answer. */
    readonly status: number,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`${request}: ${status} ${message}`, options);
  }
}
