import { describe, expect, it } from "bun:test";
import { Http2ClientSession, type StreamEnd } from "../../../src/http2/client-session";
import { encodeHeaderBlock } from "../../../src/http2/hpack-encoder";
import { ErrorCode, Flag, frame, FrameType, Setting, settingsPayload, u32Payload } from "../../../src/http2/frames";
import { PeerSocket } from "./peer-socket";

const turn = () => new Promise((resolve) => setImmediate(resolve));

function open(): { socket: PeerSocket; session: Http2ClientSession; gone: string[] } {
  const socket = new PeerSocket();
  const gone: string[] = [];
  const session = new Http2ClientSession(socket, { onGone: () => gone.push("gone") });
  socket.emit("connect");
  return { socket, session, gone };
}

function request(session: Http2ClientSession, body = Buffer.from("hello")): { ends: StreamEnd[] } & ReturnType<Http2ClientSession["request"]> {
  const ends: StreamEnd[] = [];
  const stream = session.request([[":method", "POST"], [":path", "/x"]], body, (end) => ends.push(end));
  return Object.assign(stream, { ends });
}

const okHeaders = () => Buffer.from(encodeHeaderBlock([[":status", "200"], ["content-type", "application/grpc"]]));
const okTrailers = () => Buffer.from(encodeHeaderBlock([["grpc-status", "0"]]));

describe("Http2ClientSession", () => {
  it("opens with the preface, SETTINGS (push off) and a larger connection window, then sends a request as HEADERS and DATA with END_STREAM", async () => {
    const { socket, session } = open();
    request(session);
    await turn();
    const [settings] = socket.framesOf(FrameType.settings);
    expect(settings?.payload.readUInt16BE(0)).toBe(Setting.enablePush);
    expect(socket.framesOf(FrameType.windowUpdate)[0]?.streamId).toBe(0);
    const headers = socket.framesOf(FrameType.headers);
    const data = socket.framesOf(FrameType.data);
    expect(headers.map((f) => [f.streamId, f.flags])).toEqual([[1, Flag.endHeaders]]);
    expect(data.map((f) => [f.streamId, f.flags, f.payload.toString()])).toEqual([[1, Flag.endStream, "hello"]]);
  });

  it("reads an answer's headers, data and trailers, the headers split over CONTINUATION frames", async () => {
    const { socket, session } = open();
    const call = request(session);
    const block = okHeaders();
    socket.answer(
      frame(FrameType.headers, 0, 1, block.subarray(0, 3)),
      frame(FrameType.continuation, Flag.endHeaders, 1, block.subarray(3)),
      frame(FrameType.data, 0, 1, Buffer.from("ab")),
      frame(FrameType.data, 0, 1, Buffer.from("c")),
      frame(FrameType.headers, Flag.endHeaders | Flag.endStream, 1, okTrailers()),
    );
    await turn();
    expect(call.ends).toHaveLength(1);
    const end = call.ends[0];
    if (end?.kind !== "closed") throw new Error(`expected a closed stream, got ${end?.kind}`);
    expect(end.headers).toEqual({ ":status": "200", "content-type": "application/grpc" });
    expect(end.trailers).toEqual({ "grpc-status": "0" });
    expect(Buffer.concat(end.chunks).toString()).toBe("abc");
    expect(end.resetCode).toBeUndefined();
    expect(end.peerGoingAway).toBe(false);
  });

  it("answers PING and SETTINGS with their ACKs", async () => {
    const { socket } = open();
    socket.answer(frame(FrameType.settings, 0, 0, settingsPayload([[Setting.maxFrameSize, 32_768]])), frame(FrameType.ping, 0, 0, Buffer.from("12345678")));
    await turn();
    expect(socket.framesOf(FrameType.settings).filter((f) => f.flags === Flag.ack)).toHaveLength(1);
    expect(socket.framesOf(FrameType.ping).map((f) => [f.flags, f.payload.toString()])).toEqual([[Flag.ack, "12345678"]]);
  });

  it("holds a body larger than the peer's window until its WINDOW_UPDATE, and sends it in frames no larger than the peer's limit", async () => {
    const { socket, session } = open();
    socket.answer(frame(FrameType.settings, 0, 0, settingsPayload([[Setting.initialWindowSize, 20_000]])));
    await turn();
    request(session, Buffer.alloc(50_000, 1));
    await turn();
    const sent = () => socket.framesOf(FrameType.data).reduce((sum, f) => sum + f.payload.length, 0);
    expect(sent()).toBe(20_000);
    expect(Math.max(...socket.framesOf(FrameType.data).map((f) => f.payload.length))).toBeLessThanOrEqual(16_384);
    socket.answer(frame(FrameType.windowUpdate, 0, 1, u32Payload(40_000)));
    await turn();
    // The stream's window now holds the rest (the connection's 65,535 never bound).
    expect(sent()).toBe(50_000);
    expect(socket.framesOf(FrameType.data).at(-1)?.flags).toBe(Flag.endStream);
  });

  it("starts no more streams than the peer's SETTINGS allow, and the next once one ends", async () => {
    const { socket, session } = open();
    socket.answer(frame(FrameType.settings, 0, 0, settingsPayload([[Setting.maxConcurrentStreams, 1]])));
    await turn();
    const first = request(session);
    request(session);
    await turn();
    expect(socket.framesOf(FrameType.headers).map((f) => f.streamId)).toEqual([1]);
    socket.answer(frame(FrameType.headers, Flag.endHeaders | Flag.endStream, 1, Buffer.from(encodeHeaderBlock([[":status", "200"], ["grpc-status", "5"]]))));
    await turn();
    expect(first.ends.map((e) => e.kind)).toEqual(["closed"]);
    expect(socket.framesOf(FrameType.headers).map((f) => f.streamId)).toEqual([1, 3]);
  });

  it("ends the streams a GOAWAY says were never processed as refused, takes no new ones, and tells those it had taken that the peer is going away", async () => {
    const { socket, session, gone } = open();
    const taken = request(session);
    const refused = request(session);
    await turn();
    const goAway = Buffer.alloc(8);
    goAway.writeUInt32BE(1, 0);
    socket.answer(frame(FrameType.goAway, 0, 0, goAway));
    await turn();
    expect(gone).toEqual(["gone"]);
    expect(session.usable()).toBe(false);
    expect(refused.ends).toEqual([{ kind: "closed", headers: undefined, trailers: undefined, chunks: [], resetCode: 0x7, peerGoingAway: true }]);
    socket.answer(frame(FrameType.data, Flag.endStream, 1));
    await turn();
    expect(taken.ends).toEqual([{ kind: "closed", headers: undefined, trailers: undefined, chunks: [], resetCode: undefined, peerGoingAway: true }]);
  });

  it("ends a stream the peer resets with its code", async () => {
    const { socket, session } = open();
    const call = request(session);
    socket.answer(frame(FrameType.rstStream, 0, 1, u32Payload(ErrorCode.cancel)));
    await turn();
    expect(call.ends).toEqual([{ kind: "closed", headers: undefined, trailers: undefined, chunks: [], resetCode: ErrorCode.cancel, peerGoingAway: false }]);
  });

  it("resets a stream its caller gives up with the caller's code, and tells the caller nothing more of it", async () => {
    const { socket, session } = open();
    const call = request(session);
    await turn();
    call.reset(ErrorCode.cancel);
    socket.answer(frame(FrameType.headers, Flag.endHeaders | Flag.endStream, 1, okHeaders()));
    await turn();
    expect(socket.framesOf(FrameType.rstStream).map((f) => [f.streamId, f.payload.readUInt32BE(0)])).toEqual([[1, ErrorCode.cancel]]);
    expect(call.ends).toEqual([]);
  });

  it("gives back what it reads with WINDOW_UPDATEs, for the connection and the stream", async () => {
    const { socket, session } = open();
    request(session);
    socket.answer(frame(FrameType.headers, Flag.endHeaders, 1, okHeaders()));
    for (let i = 0; i < 40; i++) socket.answer(frame(FrameType.data, 0, 1, Buffer.alloc(16_384)));
    await turn();
    const updates = socket.framesOf(FrameType.windowUpdate).slice(1);
    const given = (id: number) => updates.filter((f) => f.streamId === id).reduce((sum, f) => sum + f.payload.readUInt32BE(0), 0);
    // 655,360 octets read: half the 1 MiB window is given back as soon as it is read.
    expect(given(0)).toBeGreaterThanOrEqual(524_288);
    expect(given(1)).toBeGreaterThanOrEqual(524_288);
  });

  it("ends every open stream as lost when the connection closes, with the dial's error if it never connected", async () => {
    const { socket, session } = open();
    const call = request(session);
    socket.destroy();
    await turn();
    expect(call.ends).toEqual([{ kind: "connection lost", dialError: undefined }]);
    const never = new PeerSocket();
    const refusedDial = new Http2ClientSession(never, { onGone: () => {} });
    const dialed = request(refusedDial);
    const error = Object.assign(new Error("connect ECONNREFUSED /x.sock"), { code: "ECONNREFUSED" });
    never.destroy(error);
    await turn();
    expect(dialed.ends).toEqual([{ kind: "connection lost", dialError: error }]);
    const late = request(refusedDial);
    await turn();
    expect(late.ends.map((e) => e.kind)).toEqual(["connection lost"]);
  });

  it("ends the connection with GOAWAY when the peer's header block cannot be decoded", async () => {
    const { socket, session } = open();
    const call = request(session);
    socket.answer(frame(FrameType.headers, Flag.endHeaders, 1, Buffer.from([0x80])));
    await turn();
    const goAway = socket.framesOf(FrameType.goAway)[0];
    expect(goAway?.payload.readUInt32BE(4)).toBe(ErrorCode.compressionError);
    expect(call.ends.map((e) => e.kind)).toEqual(["connection lost"]);
  });
  it("hands a receiver's stream over as it arrives, and gives its window back only as the caller releases what it read", async () => {
    const { socket, session } = open();
    const heard: string[] = [];
    const ends: StreamEnd[] = [];
    const stream = session.request([[":method", "GET"], [":path", "/watch"]], Buffer.alloc(0), (end) => ends.push(end), {
      onHeaders: (headers) => heard.push(`headers ${String(headers[":status"])}`),
      onData: (piece) => heard.push(`data ${piece.length}`),
    });
    // Half the 1 MiB window, in frames of the default largest size.
    const piece = Buffer.alloc(16 * 1024, 1);
    const pieces = 32;
    const half = pieces * piece.length;
    socket.answer(frame(FrameType.headers, Flag.endHeaders, 1, Buffer.from(encodeHeaderBlock([[":status", "200"]]))), ...Array.from({ length: pieces }, () => frame(FrameType.data, 0, 1, piece)));
    await turn();
    expect(heard).toEqual(["headers 200", ...Array.from({ length: pieces }, () => `data ${piece.length}`)]);
    // The connection's window comes back on receipt; the stream's waits for the reader.
    expect(socket.framesOf(FrameType.windowUpdate).filter((f) => f.streamId === 1)).toEqual([]);
    stream.release(half - 1);
    await turn();
    // Given back in updates of half a window or more.
    expect(socket.framesOf(FrameType.windowUpdate).filter((f) => f.streamId === 1)).toEqual([]);
    stream.release(1);
    await turn();
    expect(socket.framesOf(FrameType.windowUpdate).filter((f) => f.streamId === 1).map((f) => f.payload.readUInt32BE(0))).toEqual([half]);
    socket.answer(frame(FrameType.data, Flag.endStream, 1, Buffer.from("end")));
    await turn();
    expect(heard.at(-1)).toBe("data 3");
    expect(ends.map((end) => (end.kind === "closed" ? end.chunks.length : end.kind))).toEqual([0]);
  });

  it("calls a PING's callback when the peer acknowledges that PING, and counts its quiet time from the last frame read", async () => {
    const { socket, session } = open();
    const acked: string[] = [];
    session.ping(() => acked.push("first"));
    session.ping(() => acked.push("second"));
    await turn();
    const pings = socket.framesOf(FrameType.ping);
    expect(pings.map((f) => f.flags)).toEqual([0, 0]);
    await Bun.sleep(20);
    const quietBefore = session.quietForMs();
    expect(quietBefore).toBeGreaterThanOrEqual(15);
    socket.answer(frame(FrameType.ping, Flag.ack, 0, pings[1]?.payload ?? Buffer.alloc(8)));
    await turn();
    expect(acked).toEqual(["second"]);
    expect(session.quietForMs()).toBeLessThan(quietBefore);
  });

  it("ends every stream as a lost connection when its owner destroys it", async () => {
    const { session, gone } = open();
    const call = request(session);
    session.destroy();
    await turn();
    expect(call.ends).toEqual([{ kind: "connection lost", dialError: undefined }]);
    expect(gone).toEqual(["gone"]);
    expect(session.usable()).toBe(false);
  });
});
