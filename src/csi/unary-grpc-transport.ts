import type { Duplex } from "node:stream";
import { create, type DescMessage, type DescMethodUnary, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues, type ContextValues, type Interceptor, type Transport, type UnaryRequest, type UnaryResponse } from "@connectrpc/connect";
import { connectErrorFromSocket, encodeEnvelope, errorFromResetCode, readAnswer, requestHeaderFields } from "./grpc-wire";
import { CallDeadlines } from "./call-deadlines";
import { callStateOf, unaryCall, type UnaryCallState } from "./unary-call";
import { Http2ClientSession, type ClientStream, type StreamEnd } from "../http2/client-session";
import { ErrorCode } from "../http2/frames";

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
 * (`grpc-timeout`, and a local deadline, one timer for all calls, that fails the call as
 * DeadlineExceeded), and the same ConnectError codes and messages for
 * every answer, which connect's own protocol-grpc functions check here as
 * they do there (test/e2e/grpc-transport-conformance.test.ts compares the
 * two call by call).
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
  const deadlines = new CallDeadlines();
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
      const req = unaryCall<I, O>({
        method,
        url: `${baseUrl}/${method.parent.typeName}/${method.name}`,
        message: create(method.input, input),
        contextValues: contextValues ?? createContextValues(),
        header,
        deadlineMs,
        callerSignal: signal,
        deadlines,
      });
      const state = callStateOf(req) as UnaryCallState;
      return (call(req) as Promise<UnaryResponse<I, O>>).then(
        (res) => {
          state.finish();
          return res;
        },
        (reason: unknown) => {
          state.finish();
          // runUnaryCall's rule: a cancelled call fails with the cancellation's reason.
          throw state.cancelled ? ConnectError.from(state.cancelReason, Code.Canceled) : ConnectError.from(reason);
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

/** A call as interceptors wrap it. */
type AnyFn = Parameters<Interceptor>[0];

function streamingRefused(): ConnectError {
  return new ConnectError("streaming calls are not supported by the CSI driver transport", Code.Unimplemented);
}

/**
 * SessionPool holds the one HTTP/2 session calls go out on. A session is
 * opened by the first call that finds none, replaced once it closes or
 * receives GOAWAY (its calls in flight finish on it), and ref'd only while
 * it carries calls, so an idle session never keeps the process alive.
 */
class SessionPool {
  private current: Http2ClientSession | undefined;

  constructor(private readonly createConnection: () => Duplex) {}

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
 * with END_STREAM, the answer read whole; the call's cancellation (its
 * deadline, or the caller's signal) resets the stream with CANCEL, as
 * connect-node does, so the driver stops working on it.
 */
function callOn<I extends DescMessage, O extends DescMessage>(session: Http2ClientSession, req: UnaryRequest<I, O>): Promise<UnaryResponse<I, O>> {
  return new Promise<UnaryResponse<I, O>>((resolve, reject) => {
    let settled = false;
    let stream: ClientStream | undefined;
    let unwatch: () => void = () => {};
    /** settle ends the call once, with the response `outcome` gives or the ConnectError it throws. */
    const settle = (outcome: () => UnaryResponse<I, O>) => {
      if (settled) return;
      settled = true;
      unwatch();
      try {
        resolve(outcome());
      } catch (e: unknown) {
        reject(ConnectError.from(e));
      }
    };
    const onCancel = () => {
      stream?.reset(ErrorCode.cancel);
      settle(() => {
        throw ConnectError.from(cancelReasonOf(req), Code.Canceled);
      });
    };
    if (isCancelled(req)) {
      onCancel();
      return;
    }
    unwatch = watchCancel(req, onCancel);
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

// A request reaches callOn as the transport made it, or as an interceptor
// copied it: either way with the call's state, whose cancellation is read
// without making the signal. One an interceptor made anew has only its signal.

function isCancelled(req: UnaryRequest): boolean {
  const state = callStateOf(req);
  return state !== undefined ? state.cancelled : req.signal.aborted;
}

function cancelReasonOf(req: UnaryRequest): unknown {
  const state = callStateOf(req);
  return state !== undefined ? state.cancelReason : req.signal.reason;
}

/** watchCancel has `onCancel` called if the call is cancelled, and returns what stops that. */
function watchCancel(req: UnaryRequest, onCancel: () => void): () => void {
  const state = callStateOf(req);
  if (state !== undefined) {
    state.onCancel(onCancel);
    return () => state.onCancel(undefined);
  }
  const signal = req.signal;
  signal.addEventListener("abort", onCancel);
  return () => signal.removeEventListener("abort", onCancel);
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
