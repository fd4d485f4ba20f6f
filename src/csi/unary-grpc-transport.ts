import * as http2 from "node:http2";
import type { Duplex } from "node:stream";
import { create, type DescMessage, type DescMethodUnary, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues, type ContextValues, type Interceptor, type Transport, type UnaryRequest, type UnaryResponse } from "@connectrpc/connect";
import { requestHeader } from "@connectrpc/connect/protocol-grpc";
import { connectErrorFromSocket, encodeEnvelope, errorFromResetCode, nodeRequestHeaders, readAnswer } from "./grpc-wire";

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

/** resolveUnaryGrpcTransportOptions fills the defaults of every optional field. */
function resolveUnaryGrpcTransportOptions(options: UnaryGrpcTransportOptions): Required<UnaryGrpcTransportOptions> {
  return { ...options, interceptors: options.interceptors ?? [] };
}

/** The message of a call cut by its connection's close, as the connection-loss rule words it. */
const connectionClosedMessage = "connection to the CSI driver closed during the call";

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
export function createUnaryGrpcTransport(given: UnaryGrpcTransportOptions): Transport {
  const options = resolveUnaryGrpcTransportOptions(given);
  const sessions = new SessionPool(options.createConnection);
  // Chained once, not per call as runUnaryCall does: an interceptor is a
  // wrapper of `next`, and ours keep no state outside the call.
  const send: AnyFn = (req) => (req.stream ? Promise.reject(streamingRefused()) : sessions.call(req));
  const call = [...options.interceptors].reduceRight<AnyFn>((next, interceptor) => interceptor(next), send);
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
      const { callSignal, cleanUp } = linkCallSignal(signal, deadlineMs);
      const req: UnaryRequest<I, O> = {
        stream: false,
        service: method.parent,
        method,
        requestMethod: "POST",
        url: `${baseUrl}/${method.parent.typeName}/${method.name}`,
        header: requestHeader(true, deadlineMs, header),
        contextValues: contextValues ?? createContextValues(),
        message: create(method.input, input),
        signal: callSignal,
      };
      return (call(req) as Promise<UnaryResponse<I, O>>).then(
        (res) => {
          cleanUp();
          return res;
        },
        (reason: unknown) => {
          cleanUp();
          // runUnaryCall's rule: an aborted call fails with the abort's reason.
          throw callSignal.aborted ? ConnectError.from(abortReason(callSignal), Code.Canceled) : ConnectError.from(reason);
        },
      );
    },
    stream() {
      // The attacher makes unary calls only (CSI's controller and identity
      // services have no streaming method it uses); framing a stream is
      // connect-node's job, and refusing says so instead of sending half a protocol.
      return Promise.reject(streamingRefused());
    },
  };
}

/** CallSignal is one call's own signal, and what to undo once the call has ended. */
interface CallSignal {
  readonly callSignal: AbortSignal;
  /** Stops the deadline's timer and unlinks the caller's signal. */
  readonly cleanUp: () => void;
}

/**
 * linkCallSignal makes the call's signal as runUnaryCall does: aborted by
 * the deadline (DeadlineExceeded, "the operation timed out") or the
 * caller's signal. One controller and one timer a call; the caller's
 * signal is linked only when there is one (the CSI client passes none to
 * publish).
 */
function linkCallSignal(callerSignal: AbortSignal | undefined, deadlineMs: number | undefined): CallSignal {
  const controller = new AbortController();
  const timer = deadlineMs === undefined ? undefined : setTimeout(() => controller.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded)), deadlineMs);
  const onCallerAbort = () => controller.abort(callerSignal?.reason);
  if (callerSignal?.aborted === true) onCallerAbort();
  else callerSignal?.addEventListener("abort", onCallerAbort);
  const cleanUp = () => {
    clearTimeout(timer);
    callerSignal?.removeEventListener("abort", onCallerAbort);
  };
  return { callSignal: controller.signal, cleanUp };
}

/** A call as interceptors wrap it. */
type AnyFn = Parameters<Interceptor>[0];

function streamingRefused(): ConnectError {
  return new ConnectError("streaming calls are not supported by the CSI driver transport", Code.Unimplemented);
}

/** abortReason is a signal's reason, or an AbortError when it was aborted without one (connect's getAbortSignalReason). */
function abortReason(signal: AbortSignal): unknown {
  if (signal.reason !== undefined) return signal.reason;
  const error = new Error("This operation was aborted");
  error.name = "AbortError";
  return error;
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
    // A dying session may not have said "close" yet while its streams
    // already ended: a call made then goes out on a new one.
    if (open === undefined || !open.usable()) {
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

  /** usable says whether a new call may still go out on this session. */
  usable(): boolean {
    return this.failure === undefined && !this.session.destroyed && !this.session.closed;
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
    // A connection that goes away ends its streams before the session
    // says so: with NO_ERROR when the driver closed it, with CANCEL or an
    // error when it died. Either way the call was cut, not answered.
    const cut = () => this.session.destroyed || this.session.closed;
    stream.on("error", (e: unknown) => settle(cut() ? new ConnectError(connectionClosedMessage, Code.Unavailable) : connectErrorFromSocket(e)));
    stream.on("close", () => {
      const answered = trailers !== undefined || responseHeaders?.["grpc-status"] !== undefined;
      if (!answered && cut()) {
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

