import { describe, expect, it } from "bun:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { requestHeader } from "@connectrpc/connect/protocol-grpc";
import { Identity, ProbeResponseSchema } from "../../../gen/csi/v1/csi_pb";
import { ErrorCode, Flag, frame, FrameType, u32Payload } from "../../../src/http2/frames";
import { encodeHeaderBlock } from "../../../src/http2/hpack-encoder";
import { HpackDecoder } from "../../../src/http2/hpack-decoder";
import { createUnaryGrpcTransport } from "../../../src/csi/unary-grpc-transport";
import { PeerSocket } from "../http2/peer-socket";

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** How startProbe makes its call: the transport's interceptors, the caller's header and signal, the deadline (5 s unless given). */
interface ProbeOptions {
  readonly interceptors?: Interceptor[];
  readonly header?: Record<string, string>;
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
}

/** startProbe makes one Probe on a transport whose connection is the returned socket, once connected. */
async function startProbe({ interceptors = [], header, signal, timeoutMs = 5_000 }: ProbeOptions = {}) {
  const socket = new PeerSocket();
  const transport = createUnaryGrpcTransport({ createConnection: () => socket, interceptors });
  const call = transport.unary(Identity.method.probe, signal, timeoutMs, header, {});
  socket.emit("connect");
  await turn();
  return { socket, call };
}

/** probeOver makes one Probe, after `answer` has played the driver's part; resolves to what the caller sees. */
async function probeOver(answer: (socket: PeerSocket) => void): Promise<{ ready: boolean | undefined } | { code: number; message: string }> {
  const { socket, call } = await startProbe();
  answer(socket);
  try {
    const res = await call;
    return { ready: res.message.ready };
  } catch (e: unknown) {
    if (!(e instanceof ConnectError)) throw e;
    return { code: e.code, message: e.rawMessage };
  }
}

/** probeAnswered makes one Probe through `interceptors` with the caller's `header`, has the driver answer with `frames`, and returns the socket and the response. */
async function probeAnswered(interceptors: Interceptor[], header: Record<string, string> | undefined, frames: Buffer[]) {
  const { socket, call } = await startProbe({ interceptors, ...(header ? { header } : {}) });
  socket.answer(...frames);
  return { socket, res: await call };
}

/** okAnswer is a driver's success to stream 1: a ProbeResponse saying `ready`, with `extraHeader` among the headers and `extraTrailer` among the trailers. */
function okAnswer(ready: boolean, extraHeader: [string, string][] = [], extraTrailer: [string, string][] = []): Buffer[] {
  const message = toBinary(ProbeResponseSchema, create(ProbeResponseSchema, { ready }));
  const envelope = Buffer.alloc(5 + message.length);
  envelope.writeUInt32BE(message.length, 1);
  envelope.set(message, 5);
  return [
    headers([[":status", "200"], ["content-type", "application/grpc"], ...extraHeader], 0),
    frame(FrameType.data, 0, 1, envelope),
    headers([["grpc-status", "0"], ...extraTrailer], Flag.endStream),
  ];
}

function goAway(lastStreamId: number): Buffer {
  const payload = Buffer.alloc(8);
  payload.writeUInt32BE(lastStreamId, 0);
  return frame(FrameType.goAway, 0, 0, payload);
}

const headers = (fields: [string, string][], flags: number) => frame(FrameType.headers, Flag.endHeaders | flags, 1, Buffer.from(encodeHeaderBlock(fields)));

describe("the unary gRPC transport, on a scripted driver", () => {
  it("reads an answer: headers, the message's envelope, grpc-status 0 in the trailers", async () => {
    const seen = await probeOver((socket) => socket.answer(...okAnswer(false)));
    expect(seen).toEqual({ ready: false });
  });

  it("fails a call the driver ends without a status while going away as cut by the connection's close (Unavailable)", async () => {
    // What a Node.js server destroying its session sends: GOAWAY, then an empty DATA frame with END_STREAM.
    const seen = await probeOver((socket) => socket.answer(goAway(1), frame(FrameType.data, Flag.endStream, 1)));
    expect(seen).toEqual({ code: 14, message: "connection to the CSI driver closed during the call" });
  });

  it("fails a call the driver ends without a status on a live connection as Internal: no status will come", async () => {
    const seen = await probeOver((socket) => socket.answer(frame(FrameType.data, Flag.endStream, 1)));
    expect(seen).toEqual({ code: 13, message: "protocol error: missing status" });
  });

  it("fails a call a GOAWAY says was never processed with the refusal's code (Unavailable), not as cut", async () => {
    const seen = await probeOver((socket) => socket.answer(goAway(0)));
    expect(seen).toEqual({ code: 14, message: "http/2 stream closed with error code REFUSED_STREAM (0x7)" });
  });

  it("fails a call the driver resets with the reset's code, going away or not", async () => {
    const seen = await probeOver((socket) => socket.answer(goAway(1), frame(FrameType.rstStream, 0, 1, u32Payload(ErrorCode.cancel))));
    expect(seen).toEqual({ code: 1, message: "http/2 stream closed with error code CANCEL (0x8)" });
  });
});

/** sentHeaderFields is the header block of the first stream the transport opened on `socket`, pseudo-headers left out. */
function sentHeaderFields(socket: PeerSocket): [string, string][] {
  const block = socket.framesOf(FrameType.headers)[0];
  if (block === undefined) throw new Error("the transport sent no HEADERS frame");
  return new HpackDecoder(4096).decode(block.payload).filter(([name]) => !name.startsWith(":")) as [string, string][];
}

/** failureOf is the code and message of the ConnectError `call` fails with; it throws if the call succeeds or fails otherwise. */
async function failureOf(call: Promise<unknown>): Promise<{ code: Code; message: string }> {
  try {
    await call;
  } catch (e: unknown) {
    if (e instanceof ConnectError) return { code: e.code, message: e.rawMessage };
    throw e;
  }
  throw new Error("expected the call to fail, and it succeeded");
}

function fieldsOf(headers: Headers): [string, string][] {
  return [...headers] as [string, string][];
}

describe("the unary gRPC transport's headers, copies by interceptors, and cancellation", () => {
  it("sends the header fields connect-node's requestHeader makes for the call's deadline", async () => {
    const { socket } = await probeAnswered([], undefined, okAnswer(true));
    expect(sentHeaderFields(socket)).toEqual(fieldsOf(requestHeader(true, 5_000, undefined)));
  });

  it("sends the header an interceptor set, and the caller's own headers", async () => {
    const setter: Interceptor = (next) => (req) => {
      req.header.set("x-traced", "yes");
      return next(req);
    };
    const { socket } = await probeAnswered([setter], { "x-caller": "me" }, okAnswer(true));
    const expected = requestHeader(true, 5_000, { "x-caller": "me" });
    expected.set("x-traced", "yes");
    expect(sentHeaderFields(socket)).toEqual(fieldsOf(expected));
  });

  it("sends the headers of a copy an interceptor made with headers of its own", async () => {
    const replacer: Interceptor = (next) => (req) => next({ ...req, header: new Headers({ "x-only": "this" }) });
    const { socket } = await probeAnswered([replacer], undefined, okAnswer(true));
    expect(sentHeaderFields(socket)).toEqual([["x-only", "this"]]);
  });

  it("answers a success's header and trailer with what the driver sent, also through an interceptor that copies the response", async () => {
    const copier: Interceptor = (next) => async (req) => ({ ...(await next(req)) });
    for (const interceptors of [[], [copier]]) {
      const { res } = await probeAnswered(interceptors, undefined, okAnswer(true, [["x-driver", "a"]], [["x-trailing", "b"]]));
      expect({ ready: res.message.ready, header: fieldsOf(res.header), trailer: fieldsOf(res.trailer) }).toEqual({
        ready: true,
        header: [["content-type", "application/grpc"], ["x-driver", "a"]],
        trailer: [["grpc-status", "0"], ["x-trailing", "b"]],
      });
    }
  });

  it("fails an answer whose headers say another encoding as connect-node does", async () => {
    const seen = await probeOver((socket) => socket.answer(...okAnswer(true, [["grpc-encoding", "gzip"]])));
    expect(seen).toEqual({ code: Code.Internal, message: 'unsupported response encoding "gzip"' });
  });

  it("cancels a call past its deadline as DeadlineExceeded and resets its stream, also when an interceptor copied the request", async () => {
    for (const copying of [false, true]) {
      const copier: Interceptor = (next) => (req) => next({ ...req });
      const { socket, call } = await startProbe({ interceptors: copying ? [copier] : [], timeoutMs: 20 });
      expect(await failureOf(call)).toEqual({ code: Code.DeadlineExceeded, message: "the operation timed out" });
      // The stream was opened before its deadline, so the reset cancels a call the driver saw.
      expect(socket.framesOf(FrameType.headers).map((f) => f.streamId)).toEqual([1]);
      await turn();
      const resets = socket.framesOf(FrameType.rstStream);
      expect(resets.map((f) => [f.streamId, f.payload.readUInt32BE(0)])).toEqual([[1, ErrorCode.cancel]]);
    }
  });

  it("cancels a call when the caller's signal aborts, with its reason, and resets its stream", async () => {
    const caller = new AbortController();
    const { socket, call } = await startProbe({ signal: caller.signal });
    caller.abort(new Error("shutting down"));
    expect(await failureOf(call)).toEqual({ code: Code.Canceled, message: "shutting down" });
    await turn();
    expect(socket.framesOf(FrameType.rstStream).map((f) => f.payload.readUInt32BE(0))).toEqual([ErrorCode.cancel]);
  });

  it("fails a call whose caller's signal was aborted before it started, sending nothing", async () => {
    const socket = new PeerSocket();
    const transport = createUnaryGrpcTransport({ createConnection: () => socket });
    const caller = new AbortController();
    caller.abort(new Error("already gone"));
    expect(await failureOf(transport.unary(Identity.method.probe, caller.signal, 5_000, undefined, {}))).toEqual({ code: Code.Canceled, message: "already gone" });
    expect(socket.framesOf(FrameType.headers)).toEqual([]);
  });
});
