import { describe, expect, it } from "bun:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { Identity, ProbeResponseSchema } from "../../../gen/csi/v1/csi_pb";
import { ErrorCode, Flag, frame, FrameType, u32Payload } from "../../../src/http2/frames";
import { encodeHeaderBlock } from "../../../src/http2/hpack-encoder";
import { createUnaryGrpcTransport } from "../../../src/csi/unary-grpc-transport";
import { PeerSocket } from "../http2/peer-socket";

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** probeOver makes one Probe on a transport whose connection is `socket`, after `answer` has played the driver's part; resolves to what the caller sees. */
async function probeOver(answer: (socket: PeerSocket) => void): Promise<{ ready: boolean | undefined } | { code: number; message: string }> {
  const socket = new PeerSocket();
  const transport = createUnaryGrpcTransport({ createConnection: () => socket });
  const call = transport.unary(Identity.method.probe, undefined, 5_000, undefined, {});
  socket.emit("connect");
  await turn();
  answer(socket);
  try {
    const res = await call;
    return { ready: res.message.ready };
  } catch (e: unknown) {
    if (!(e instanceof ConnectError)) throw e;
    return { code: e.code, message: e.rawMessage };
  }
}

function goAway(lastStreamId: number): Buffer {
  const payload = Buffer.alloc(8);
  payload.writeUInt32BE(lastStreamId, 0);
  return frame(FrameType.goAway, 0, 0, payload);
}

const headers = (fields: [string, string][], flags: number) => frame(FrameType.headers, Flag.endHeaders | flags, 1, Buffer.from(encodeHeaderBlock(fields)));

describe("the unary gRPC transport, on a scripted driver", () => {
  it("reads an answer: headers, the message's envelope, grpc-status 0 in the trailers", async () => {
    const message = toBinary(ProbeResponseSchema, create(ProbeResponseSchema, { ready: false }));
    const envelope = Buffer.alloc(5 + message.length);
    envelope.writeUInt32BE(message.length, 1);
    envelope.set(message, 5);
    const seen = await probeOver((socket) =>
      socket.answer(
        headers([[":status", "200"], ["content-type", "application/grpc"]], 0),
        frame(FrameType.data, 0, 1, envelope),
        headers([["grpc-status", "0"]], Flag.endStream),
      ),
    );
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
