import { create, type DescMessage, type DescMethodUnary, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues, type ContextValues, type Interceptor, type Transport, type UnaryRequest, type UnaryResponse } from "@connectrpc/connect";
import { requestHeader } from "@connectrpc/connect/protocol-grpc";
import { connectErrorFromSocket, encodeEnvelope, errorFromResetCode, readAnswer, requestHeaderFields } from "./grpc-wire";
import { Http2ClientSession, type ClientStream, type SessionSocket, type StreamEnd } from "../http2/client-session";
import { ErrorCode } from "../http2/frames";

/** Options of {@link createUnaryGrpcTransport}. */
export interface UnaryGrpcTransportOptions {
  /**
   * Opens the byte stream an HTTP/2 session runs over (the driver's Unix
   * socket). Called for the first call, and again for the first call after
   * a session closed or was told to go away. Required.
   */
  readonly createConnection: () => SessionSocket;
  /** Connect interceptors around every call, outermost first. Default none. */
  readonly interceptors?: readonly Interceptor[];
}

/** resolveUnaryGrpcTransportOptions fills the defaults of every optional field. */
function resolveUnaryGrpcTransportOptions(options: UnaryGrpcTransportOptions): Required<UnaryGrpcTransportOptions> {
  return { ...options, interceptors: options.interceptors ?? [] };
}

/** The message of a call cut by its connection's close, as the connection-loss rule words it. */
const connectionClosedMessage = "connection to the CSI driver closed during the call";

// The calls' origin is a placeholder: the connection is a Unix socket.
const baseUrl = "http://localhost";

/**
 * createUnaryGrpcTransport is a Connect `Transport` that speaks gRPC unary
 * calls over one long-lived HTTP/2 connection, with the framing done here
 * rather than by connect-node's generic HTTP client, and the HTTP/2 by
 * our own client session (http2/client-session.ts) rather than `node:http2`.
 *
 * Why: connect-node sends a unary call's body through async iterables, a
 * promise per session lookup, a write and then an `end()` whose `_final`
 * flushes an empty DATA frame of its own; with Bun's `node:http2` that was
 * about a third of the attacher's CPU. Even with one `request()` and one
 * `end(envelope)` a call, a burst on `node:http2` cost about 1.17x the CPU
 * it costs on our own session. Here a call is one header block and one
 * DATA frame that carries the whole length-prefixed message with
 * END_STREAM, written with the other calls of the same turn in one socket
 * write, and its answer is read whole. What a caller sees is
 * connect-node's gRPC transport's: the interceptors, deadlines
 * (`grpc-timeout`, and a local timer that fails the call as
 * DeadlineExceeded), and the same ConnectError codes and messages for
 * every answer, its status read as connect's protocol-grpc functions read
 * it (grpc-status.ts; test/e2e/grpc-transport-conformance.test.ts compares
 * the two transports call by call).
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

/**
 * SessionPool holds the one HTTP/2 session calls go out on. A session is
 * opened by the first call that finds none, replaced once it closes or
 * receives GOAWAY (its calls in flight finish on it), and ref'd only while
 * it carries calls, so an idle session never keeps the process alive.
 */
class SessionPool {
  private current: Http2ClientSession | undefined;

  constructor(private readonly createConnection: () => SessionSocket) {}

  call<I extends DescMessage, O extends DescMessage>(req: UnaryRequest<I, O>): Promise<UnaryResponse<I, O>> {
    let session = this.current;
    if (session === undefined || !session.usable()) {
      const opened = new Http2ClientSession(this.createConnection(), {
        onGone: () => {
          if (this.current === opened) this.current = undefined;
        },
      });
      this.current = opened;
      session = opened;
    }
    return callOn(session, req);
  }
}

/**
 * callOn makes one call on `session`: the headers and the whole envelope
 * with END_STREAM, the answer read whole; an abort of the call's signal
 * (its deadline, or the caller's) resets the stream with CANCEL, as
 * connect-node does, so the driver stops working on it.
 */
function callOn<I extends DescMessage, O extends DescMessage>(session: Http2ClientSession, req: UnaryRequest<I, O>): Promise<UnaryResponse<I, O>> {
  return new Promise<UnaryResponse<I, O>>((resolve, reject) => {
    let settled = false;
    let stream: ClientStream | undefined;
    /** settle ends the call once, with the response `outcome` gives or the ConnectError it throws. */
    const settle = (outcome: () => UnaryResponse<I, O>) => {
      if (settled) return;
      settled = true;
      req.signal.removeEventListener("abort", onAbort);
      try {
        resolve(outcome());
      } catch (e: unknown) {
        reject(ConnectError.from(e));
      }
    };
    const onAbort = () => {
      stream?.reset(ErrorCode.cancel);
      settle(() => {
        throw ConnectError.from(req.signal.reason, Code.Canceled);
      });
    };
    if (req.signal.aborted) {
      onAbort();
      return;
    }
    req.signal.addEventListener("abort", onAbort);
    let envelope: Buffer;
    try {
      envelope = encodeEnvelope(req.method.input, req.message);
    } catch (e: unknown) {
      settle(() => {
        throw e;
      });
      return;
    }
    stream = session.request(requestHeaderFields(req), envelope, (end) => settle(() => answerOf(req, end)));
  });
}

/** answerOf is a call's response from how its stream ended, or throws the ConnectError it came to. */
function answerOf<I extends DescMessage, O extends DescMessage>(req: UnaryRequest<I, O>, end: StreamEnd): UnaryResponse<I, O> {
  if (end.kind === "connection lost") {
    // A dial that failed fails as connect-node fails it; a connection that
    // had been up was cut under the call, which no answer will follow.
    throw end.dialError === undefined ? new ConnectError(connectionClosedMessage, Code.Unavailable) : connectErrorFromSocket(end.dialError);
  }
  // A driver shutting down (GOAWAY) may end a call it had taken without a
  // status and without a reset (a Node.js server destroying its session
  // sends an empty DATA frame with END_STREAM): the call was cut, as by a close.
  const answered = end.trailers !== undefined || end.headers?.["grpc-status"] !== undefined;
  if (!answered && end.peerGoingAway && end.resetCode === undefined) throw new ConnectError(connectionClosedMessage, Code.Unavailable);
  const reset = errorFromResetCode(end.resetCode);
  if (reset !== undefined) throw reset;
  if (end.headers === undefined) {
    // Reset with NO_ERROR before any answer: no status will come. gRPC's
    // own clients fail such a call at once as Internal, and so does this.
    throw new ConnectError("protocol error: missing status", Code.Internal);
  }
  return readAnswer(req, end.headers, end.chunks, end.trailers);
}
