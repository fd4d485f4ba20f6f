/**
 * KubeApiError is a non-2xx answer from the API server, carrying the HTTP
 * status, the Status object's reason and its message exactly as the server
 * wrote it (operators grep for that wording, e.g.
 * `persistentvolumes "pv1" not found`).
 */
export class KubeApiError extends Error {
  override name = "KubeApiError";
  readonly status: number;
  readonly reason: string;

  constructor(status: number, reason: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.status = status;
    this.reason = reason;
  }

  /** from builds the error from a response body (a metav1.Status when the server wrote one). */
  static from(status: number, body: string, what: string): KubeApiError {
    const raw = `${what}: HTTP ${status}: ${body.slice(0, 200)}`;
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (e: unknown) {
      // Not JSON (a proxy's error page, say): the raw text, and why it was not read as a Status.
      return new KubeApiError(status, "", raw, { cause: e });
    }
    if (parsed && typeof parsed === "object" && "kind" in parsed && parsed.kind === "Status") {
      const statusObject = parsed as { reason?: unknown; message?: unknown };
      const reason = typeof statusObject.reason === "string" ? statusObject.reason : "";
      const message = typeof statusObject.message === "string" ? statusObject.message : `${what}: HTTP ${status}`;
      return new KubeApiError(status, reason, message);
    }
    return new KubeApiError(status, "", raw);
  }
}

/** KubeTransportError is a request that never got an HTTP answer (connection refused, TLS failure, reset). */
export class KubeTransportError extends Error {
  override name = "KubeTransportError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * KubeResponseError is an answer the client cannot read: a body that is not
 * JSON (a proxy's page, a truncated reply), or a watch stream cut in the
 * middle of an event. The message names the request and shows the start
 * of what arrived.
 */
export class KubeResponseError extends Error {
  override name = "KubeResponseError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** ObjectSchemaError names the object and the field that did not match, so one bad object can be skipped and reported. */
export class ObjectSchemaError extends Error {
  override name = "ObjectSchemaError";
  constructor(kind: string, name: string, detail: string) {
    super(`${kind} ${JSON.stringify(name)} is malformed: ${detail}`);
  }
}

function apiStatus(error: unknown): number | undefined {
  return error instanceof KubeApiError ? error.status : undefined;
}

export const isNotFound = (error: unknown): boolean => apiStatus(error) === 404;
/** isExpired: a watch or list resourceVersion too old for the server (410 Gone, reason Expired). */
export const isExpired = (error: unknown): boolean => apiStatus(error) === 410;
export const isTooManyRequests = (error: unknown): boolean => apiStatus(error) === 429;
/** isAlreadyExists: a create of a name that is taken (409, reason AlreadyExists). */
export const isAlreadyExists = (error: unknown): boolean => error instanceof KubeApiError && error.status === 409 && error.reason === "AlreadyExists";
