import { Code, ConnectError } from "@connectrpc/connect";

/** CsiCallError is a failed gRPC call to the driver, printed as Go's gRPC prints a status. */
export class CsiCallError extends Error {
  override name = "CsiCallError";
  readonly code: Code;
  readonly description: string;

  constructor(code: Code, description: string, options?: { cause?: unknown }) {
    // Operators grep attachError for Go's wording: rpc error: code = NotFound desc = ...
    super(`rpc error: code = ${codeName(code)} desc = ${description}`, options);
    this.code = code;
    this.description = description;
  }

  /** from converts whatever a Connect call threw; `timedOut` says our own deadline fired. */
  static from(reason: unknown, timedOut: boolean): CsiCallError {
    const error = ConnectError.from(reason);
    // Go reports its own expired context as "context deadline exceeded".
    if (error.code === Code.DeadlineExceeded && timedOut) {
      return new CsiCallError(error.code, "context deadline exceeded", { cause: reason });
    }
    return new CsiCallError(error.code, error.rawMessage, { cause: reason });
  }
}

/** codeName is the gRPC code name as Go spells it (`OK`, `NotFound`, `DeadlineExceeded`). */
export function codeName(code: Code | 0): string {
  return code === 0 ? "OK" : (Code[code] ?? `Code(${code})`);
}

/** grpcCode returns the gRPC code of a driver error, or undefined when the error is not a gRPC status. */
export function grpcCode(error: unknown): number | undefined {
  return error instanceof CsiCallError ? error.code : undefined;
}
