import * as http2 from "node:http2";
import type { Duplex } from "node:stream";
import { fromBinary, toBinary, type DescMessage, type DescMethodUnary, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues, type ContextValues, type Interceptor, type Transport, type UnaryRequest, type UnaryResponse } from "@connectrpc/connect";
import { createMethodUrl, runUnaryCall } from "@connectrpc/connect/protocol";
import { requestHeader, validateResponse, validateTrailer } from "@connectrpc/connect/protocol-grpc";

/** Options of {@link createUnaryGrpcTransport}. */
export interface UnaryGrpcTransportOptions {
  /**
   * Opens the byte stream an HTTP/2 session runs over (the driver's Unix
   * socket). Called for the first call, and again for the first call after
   * a session closed or was told to go away. Required.
   */
  readonly createConnection: () => Duplex;
  /** Connect interceptors around every call, outermost first. Default none. */
  readonly interceptors?: readonly Interceptor[];
}

/** The message of a call cut by its connection's close, as the connection-loss rule words it. */
export const connectionClosedMessage = "connection to the CSI driver closed during the call";

// The session's origin is a placeholder: the connection is a Unix socket.
const baseUrl = "http://localhost";

/**
 * createUnaryGrpcTransport is a Connect `Transport` that speaks gRPC unary
 * calls over one long-lived HTTP/2 session, with the framing done here
 * rather than by connect-node's generic HTTP client.
 *
 * Why: connect-node sends a unary call's body through async iterables, a
 * promise per session lookup, a write and then an `end()` whose `_final`
 * flushes an empty DATA frame of its own; with Bun's `node:http2` that was
 * about a third of the attacher's CPU. Here a call is one `request()` and
 * one `end(envelope)`: the headers and a DATA frame that carries the whole
 * length-prefixed message with END_STREAM, written together when the
 * stream uncorks. The answer is read from the stream's events into one
 * buffer. What a caller sees is connect-node's gRPC transport's: the
 * interceptors, deadlines (`grpc-timeout`, and a local timer that fails
 * the call as DeadlineExceeded), and the same ConnectError codes and
 * messages for every answer, which connect's own protocol-grpc functions
 * check here as they do there (test/e2e/grpc-transport-conformance.test.ts
 * compares the two call by call).
 *
 * Two things differ on purpose. A call in flight when its session closes
 * fails at once as Unavailable ({@link connectionClosedMessage}), where
 * connect-node under Bun would wait out the deadline (Bun ends such streams
 * with NO_ERROR and no answer). And no `grpc-accept-encoding` is sent: the
 * attacher's messages are small and local, so it asks for none; an answer
 * compressed anyway fails as connect-node fails one it cannot decompress.
 */
export function createUnaryGrpcTransport(options: UnaryGrpcTransportOptions): Transport {
  const interceptors = [...(options.interceptors ?? [])];
  const sessions = new SessionPool(options.createConnection);
  return {
    unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: Parameters<Transport["unary"]>[3],
      input: MessageInitShape<I>,
      contextValues?: ContextValues,
    ): Promise<UnaryResponse<I, O>> {
      // connect-node's rule: a timeout of 0 or less means none.
      const deadlineMs = timeoutMs !== undefined && timeoutMs > 0 ? timeoutMs : undefined;
      return runUnaryCall<I, O>({
        interceptors,
        ...(signal === undefined ? {} : { signal }),
        ...(deadlineMs === undefined ? {} : { timeoutMs: deadlineMs }),
        req: {
          stream: false,
          service: method.parent,
          method,
          requestMethod: "POST",
          url: createMethodUrl(baseUrl, method),
          header: requestHeader(true, deadlineMs, header),
          contextValues: contextValues ?? createContextValues(),
          message: input,
        },
        next: (req) => sessions.call(req),
      });
    },
    stream() {
      // The attacher makes unary calls only (CSI's controller and identity
      // services have no streaming method it uses); framing a stream is
      // connect-node's job, and refusing says so instead of sending half a protocol.
      return Promise.reject(new ConnectError("streaming calls are not supported by the CSI driver transport", Code.Unimplemented));
    },
  };
}

/** A call waiting on a session: what its session's close does to it. */
type CallInFlight = (error: ConnectError) => void;

/**
 * SessionPool holds the one HTTP/2 session calls go out on. A session is
 * opened by the first call that finds none, replaced once it closes or
 * receives GOAWAY (its calls in flight finish on it), and ref'd only while
 * it carries calls, so an idle session never keeps the process alive.
 */
class SessionPool {
  private current: OpenSession | undefined;

  constructor(private readonly createConnection: () => Duplex) {}

  call<I extends DescMessage, O extends DescMessage>(req: UnaryRequest<I, O>): Promise<UnaryResponse<I, O>> {
    let open = this.current;
    if (open === undefined) {
      open = new OpenSession(this.createConnection, () => {
        if (this.current === open) this.current = undefined;
      });
      this.current = open;
    }
    return open.call(req);
  }
}

/** OpenSession is one HTTP/2 session and the calls in flight on it. */
class OpenSession {
  private readonly session: http2.ClientHttp2Session;
  private connected = false;
  /** Set once the session failed or closed: later calls on it fail with this. */
  private failure: ConnectError | undefined;
  /** Calls waiting for the session to connect. */
  private waiting: (() => void)[] = [];
  /** Every call started and not settled, so a close can fail them at once. */
  private readonly inFlight = new Set<CallInFlight>();

  constructor(createConnection: () => Duplex, onGone: () => void) {
    this.session = http2.connect(baseUrl, { createConnection });
    this.session.once("connect", () => {
      this.connected = true;
      for (const start of this.waiting.splice(0)) start();
    });
    // A dial that fails ends the session with its error: the calls waiting
    // for it fail as connect-node fails them. Once connected, an error is
    // the connection's end, which fails the calls on it as a close does.
    this.session.on("error", (e: unknown) => {
      this.fail(this.connected ? new ConnectError(connectionClosedMessage, Code.Unavailable) : connectErrorFromSocket(e));
    });
    // A driver that is shutting down says GOAWAY: calls already sent finish
    // on this session, new ones open the next.
    this.session.once("goaway", onGone);
    this.session.once("close", () => {
      onGone();
      this.fail(new ConnectError(connectionClosedMessage, Code.Unavailable));
    });
    this.session.unref();
  }

  call<I extends DescMessage, O extends DescMessage>(req: UnaryRequest<I, O>): Promise<UnaryResponse<I, O>> {
    return new Promise<UnaryResponse<I, O>>((resolve, reject) => {
      if (this.failure !== undefined) {
        reject(this.failure);
        return;
      }
      let settled = false;
      const settle = (error: ConnectError | undefined, response?: UnaryResponse<I, O>) => {
        if (settled) return;
        settled = true;
        this.inFlight.delete(onClose);
        if (this.inFlight.size === 0) this.session.unref();
        req.signal.removeEventListener("abort", onAbort);
        if (error === undefined && response !== undefined) resolve(response);
        else reject(error ?? new ConnectError("protocol error: missing output message for unary method", Code.Unknown));
      };
      const onClose: CallInFlight = (error) => settle(error);
      let stream: http2.ClientHttp2Stream | undefined;
      const onAbort = () => {
        // runUnaryCall rejects with the signal's reason (the deadline, or
        // the caller's abort); the stream is reset as connect-node does,
        // with CANCEL, so the driver stops working on it.
        stream?.close(http2.constants.NGHTTP2_CANCEL);
        settle(ConnectError.from(req.signal.reason, Code.Canceled));
      };
      if (req.signal.aborted) {
        onAbort();
        return;
      }
      req.signal.addEventListener("abort", onAbort);
      if (this.inFlight.size === 0) this.session.ref();
      this.inFlight.add(onClose);
      const start = () => {
        if (settled) return;
        try {
          stream = this.send(req, settle);
        } catch (e: unknown) {
          settle(connectErrorFromSocket(e));
        }
      };
      if (this.connected) start();
      else this.waiting.push(start);
    });
  }

  /** send writes the call: headers, then the whole envelope with END_STREAM; `settle` gets the outcome. */
  private send<I extends DescMessage, O extends DescMessage>(req: UnaryRequest<I, O>, settle: (error: ConnectError | undefined, response?: UnaryResponse<I, O>) => void): http2.ClientHttp2Stream {
    const envelope = encodeEnvelope(req.method.input, req.message);
    const stream = this.session.request(nodeRequestHeaders(req));
    const chunks: Buffer[] = [];
    let responseHeaders: http2.IncomingHttpHeaders | undefined;
    let trailers: http2.IncomingHttpHeaders | undefined;
    stream.on("response", (headers) => {
      responseHeaders = headers;
    });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("trailers", (headers) => {
      trailers = headers;
    });
    stream.on("error", (e: unknown) => settle(connectErrorFromSocket(e)));
    stream.on("close", () => {
      const answered = trailers !== undefined || responseHeaders?.["grpc-status"] !== undefined;
      // A connection that goes away ends its streams before the session
      // says so: with NO_ERROR when the driver closed it, with CANCEL when
      // it died. Either way the call was cut, not answered.
      if (!answered && (this.session.destroyed || this.session.closed)) {
        settle(new ConnectError(connectionClosedMessage, Code.Unavailable));
        return;
      }
      const reset = errorFromResetCode(stream.rstCode);
      if (reset !== undefined) {
        settle(reset);
        return;
      }
      if (responseHeaders === undefined) {
        // Reset with NO_ERROR before any answer, on a live connection: no
        // status will come. connect-node would wait out the deadline; gRPC's
        // own clients fail such a call at once as Internal, and so does this.
        settle(new ConnectError("protocol error: missing status", Code.Internal));
        return;
      }
      try {
        settle(undefined, readAnswer(req, responseHeaders, chunks, trailers));
      } catch (e: unknown) {
        settle(ConnectError.from(e));
      }
    });
    stream.end(envelope);
    return stream;
  }

  /** fail ends the session's calls in flight and refuses new ones with `error`. */
  private fail(error: ConnectError): void {
    this.failure ??= error;
    this.waiting = [];
    for (const onClose of [...this.inFlight]) onClose(this.failure);
    if (!this.session.destroyed) this.session.destroy();
  }
}

/** nodeRequestHeaders turns the call's headers, which interceptors may have changed, into `node:http2`'s form. */
function nodeRequestHeaders(req: UnaryRequest): http2.OutgoingHttpHeaders {
  const headers: http2.OutgoingHttpHeaders = {
    ":method": "POST",
    // The URL is the method's, under the placeholder origin.
    ":path": req.url.startsWith(baseUrl) ? req.url.slice(baseUrl.length) : new URL(req.url).pathname,
  };
  req.header.forEach((value, key) => {
    headers[key] = value;
  });
  return headers;
}

/** encodeEnvelope serializes the message behind gRPC's 5-byte prefix (no compression flag, big-endian length), in one buffer. */
function encodeEnvelope<I extends DescMessage>(schema: I, message: MessageShape<I>): Buffer {
  let bytes: Uint8Array;
  try {
    bytes = toBinary(schema, message);
  } catch (e: unknown) {
    throw new ConnectError(`serialize binary: ${e instanceof Error ? e.message : String(e)}`, Code.Internal);
  }
  const envelope = Buffer.allocUnsafe(5 + bytes.byteLength);
  envelope[0] = 0;
  envelope.writeUInt32BE(bytes.byteLength, 1);
  envelope.set(bytes, 5);
  return envelope;
}

/**
 * readAnswer checks a finished stream's answer in connect-node's order and
 * with its words: HTTP status and content type, the envelopes of the body,
 * the trailers, then a status sent in the headers (trailers-only).
 */
function readAnswer<I extends DescMessage, O extends DescMessage>(req: UnaryRequest<I, O>, nodeHeaders: http2.IncomingHttpHeaders, chunks: readonly Buffer[], nodeTrailers: http2.IncomingHttpHeaders | undefined): UnaryResponse<I, O> {
  const header = webHeaders(nodeHeaders);
  const trailer = nodeTrailers === undefined ? new Headers() : webHeaders(nodeTrailers);
  const { headerError } = validateResponse(Number(nodeHeaders[":status"] ?? 0), header);
  const encoding = header.get("grpc-encoding");
  if (encoding !== null && encoding.toLowerCase() !== "identity") {
    throw new ConnectError(`unsupported response encoding "${encoding}"`, Code.Internal, header);
  }
  const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
  let message: MessageShape<O> | undefined;
  let offset = 0;
  while (body.byteLength - offset >= 5) {
    const length = body.readUInt32BE(offset + 1);
    if (body.byteLength - offset - 5 < length) break;
    if (((body[offset] as number) & 0x01) === 0x01) {
      throw new ConnectError("received compressed envelope, but do not know how to decompress", Code.Internal);
    }
    if (message !== undefined) {
      throw new ConnectError("protocol error: received extra output message for unary method", Code.Unimplemented);
    }
    message = parseMessage(req.method.output, body.subarray(offset + 5, offset + 5 + length));
    offset += 5 + length;
  }
  if (offset < body.byteLength) {
    throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
  }
  validateTrailer(trailer, header);
  if (message === undefined) {
    // Trailers-only: the status came in the headers.
    if (headerError !== undefined) throw headerError;
    throw new ConnectError("protocol error: missing output message for unary method", trailer.has("grpc-status") ? Code.Unimplemented : Code.Unknown);
  }
  if (headerError !== undefined) {
    throw new ConnectError("protocol error: received output message for unary method with error status", Code.Unknown);
  }
  return { stream: false, service: req.method.parent, method: req.method, header, message, trailer };
}

function parseMessage<O extends DescMessage>(schema: O, bytes: Uint8Array): MessageShape<O> {
  try {
    return fromBinary(schema, bytes);
  } catch (e: unknown) {
    throw new ConnectError(`parse binary: ${e instanceof Error ? e.message : String(e)}`, Code.Internal);
  }
}

/** webHeaders turns `node:http2` headers into fetch Headers, pseudo-headers left out, as connect-node does. */
function webHeaders(nodeHeaders: http2.IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const key in nodeHeaders) {
    if (key.startsWith(":")) continue;
    const value = nodeHeaders[key];
    if (value === undefined) continue;
    if (Array.isArray(value)) {
      for (const item of value) headers.append(key, item);
    } else {
      headers.append(key, String(value));
    }
  }
  return headers;
}

/** The HTTP/2 error codes of RFC 9113 section 7, by number. */
const h2ErrorNames: Readonly<Record<number, string>> = {
  1: "PROTOCOL_ERROR",
  2: "INTERNAL_ERROR",
  3: "FLOW_CONTROL_ERROR",
  4: "SETTINGS_TIMEOUT",
  6: "FRAME_SIZE_ERROR",
  7: "REFUSED_STREAM",
  8: "CANCEL",
  9: "COMPRESSION_ERROR",
  10: "CONNECT_ERROR",
  11: "ENHANCE_YOUR_CALM",
  12: "INADEQUATE_SECURITY",
  13: "HTTP_1_1_REQUIRED",
};

/**
 * The gRPC code of a stream reset by its error code, as gRPC's
 * PROTOCOL-HTTP2.md maps them (connect-node's mapping). NO_ERROR and
 * STREAM_CLOSED carry no failure of their own.
 */
function resetCodeToGrpc(rstCode: number): Code | undefined {
  switch (rstCode) {
    case 1:
    case 2:
    case 3:
    case 4:
    case 6:
    case 9:
    case 10:
      return Code.Internal;
    case 7:
      return Code.Unavailable;
    case 8:
      return Code.Canceled;
    case 11:
      return Code.ResourceExhausted;
    case 12:
    case 13:
      return Code.PermissionDenied;
    default:
      return undefined;
  }
}

function errorFromResetCode(rstCode: number | undefined): ConnectError | undefined {
  if (rstCode === undefined) return undefined;
  const code = resetCodeToGrpc(rstCode);
  if (code === undefined) return undefined;
  return new ConnectError(`http/2 stream closed with error code ${h2ErrorNames[rstCode]} (0x${rstCode.toString(16)})`, code);
}

/** The system error codes that say the peer is not there (connect-node's list). */
const unavailableErrnos = new Set(["ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED"]);
/** The ones that say a stream or connection was cut under a call. */
const abortedErrnos = new Set(["ERR_STREAM_WRITE_AFTER_END", "ERR_STREAM_DESTROYED", "ERR_HTTP2_INVALID_STREAM", "ECONNRESET"]);

/**
 * connectErrorFromSocket classifies an error of the socket or the session
 * as connect-node does, by the Node error codes in its cause chain: a
 * refused dial is Unavailable, a cut stream Aborted, anything else Internal;
 * the message is the error's own.
 */
function connectErrorFromSocket(reason: unknown): ConnectError {
  if (reason instanceof ConnectError) return reason;
  const codes: string[] = [];
  const seen = new Set<unknown>();
  for (let e: unknown = reason; e instanceof Error && !seen.has(e); e = e.cause) {
    seen.add(e);
    if ("code" in e && typeof e.code === "string") codes.push(e.code);
  }
  const code = codes.some((c) => abortedErrnos.has(c)) ? Code.Aborted : codes.some((c) => unavailableErrnos.has(c)) ? Code.Unavailable : Code.Internal;
  const error = ConnectError.from(reason, code);
  if (error !== reason) error.cause = reason;
  return error;
}
