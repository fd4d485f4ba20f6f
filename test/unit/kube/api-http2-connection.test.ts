import { afterEach, beforeAll, describe, expect, it } from "bun:test";
import { ApiConnectionError, ApiHttp2Connection } from "../../../src/kube/api-http2-connection";
import { NotHttp2Error } from "../../../src/kube/tls-socket";
import { ErrorCode, frame, FrameType, Flag, u32Payload } from "../../../src/http2/frames";
import { encodeHeaderBlock } from "../../../src/http2/hpack-encoder";
import { field, makeTestCertificate, TlsH2Peer, type TestCertificate } from "./tls-h2-peer";

let certificate: TestCertificate;
let peer: TlsH2Peer | undefined;

beforeAll(async () => {
  certificate = await makeTestCertificate();
});

afterEach(async () => {
  await peer?.stop();
  peer = undefined;
});

/** until waits for what a peer sees over a real socket, however loaded the machine, rather than for a fixed time. */
async function until(what: string, holds: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!holds()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(2);
  }
}

function connectionTo(server: TlsH2Peer, healthCheck = { readIdleMs: 30_000, pingTimeoutMs: 15_000 }): ApiHttp2Connection {
  return new ApiHttp2Connection({ server: server.url, tls: { ca: certificate.cert }, healthCheck });
}

describe("ApiHttp2Connection", () => {
  it("carries requests as streams of one TLS connection, the caller's headers lowercased, HTTP/1.1's connection fields left out and gzip asked for", async () => {
    peer = await TlsH2Peer.start({ certificate, onRequest: (connection, request) => connection.answer(request.streamId, 200, `{"path":"${field(request, ":path")}"}`) });
    const api = connectionTo(peer);
    const answers = await Promise.all([
      api.request({ method: "GET", path: "/api/v1/a", headers: { Authorization: "Bearer t", Connection: "keep-alive" } }),
      api.request({ method: "PATCH", path: "/api/v1/b", headers: { "Content-Type": "application/merge-patch+json" }, body: "{}" }),
    ]);
    expect(answers.map((a) => [a.status, a.body.toString()])).toEqual([
      [200, '{"path":"/api/v1/a"}'],
      [200, '{"path":"/api/v1/b"}'],
    ]);
    expect(peer.connections).toHaveLength(1);
    const [first, second] = peer.connections[0]?.requests ?? [];
    expect(first?.fields).toEqual([
      [":method", "GET"],
      [":scheme", "https"],
      [":authority", new URL(peer.url).host],
      [":path", "/api/v1/a"],
      ["authorization", "Bearer t"],
      // Asked for by the connection, which decodes it.
      ["accept-encoding", "gzip"],
    ]);
    expect(field(second, "content-type")).toBe("application/merge-patch+json");
  });

  it("decodes an answer the server compressed with gzip", async () => {
    const list = JSON.stringify({ kind: "PersistentVolumeList", items: Array.from({ length: 50 }, (_, i) => ({ metadata: { name: `pv-${i}` } })) });
    peer = await TlsH2Peer.start({
      certificate,
      onRequest: (connection, request) => {
        const headers = Buffer.from(encodeHeaderBlock([[":status", "200"], ["content-encoding", "gzip"]]));
        connection.send(frame(FrameType.headers, Flag.endHeaders, request.streamId, headers), frame(FrameType.data, Flag.endStream, request.streamId, Buffer.from(Bun.gzipSync(Buffer.from(list)))));
      },
    });
    const answer = await connectionTo(peer).request({ method: "GET", path: "/api/v1/persistentvolumes", headers: {} });
    expect(answer.body.toString()).toBe(list);
  });

  it("sends a request the server refused unprocessed once more, on a new connection", async () => {
    peer = await TlsH2Peer.start({
      certificate,
      onRequest: (connection, request) => {
        // The first connection goes away before it processed anything.
        if (connection === peer?.connections[0]) connection.send(frame(FrameType.goAway, 0, 0, Buffer.concat([u32Payload(0), u32Payload(ErrorCode.noError)])));
        else connection.answer(request.streamId, 200, "{}");
      },
    });
    const answer = await connectionTo(peer).request({ method: "GET", path: "/x", headers: {} });
    expect(answer.status).toBe(200);
    expect(peer.connections.map((c) => c.requests.length)).toEqual([1, 1]);
  });

  it("does not send again a request the server reset after it answered", async () => {
    peer = await TlsH2Peer.start({
      certificate,
      onRequest: (connection, request) => {
        connection.send(frame(FrameType.headers, Flag.endHeaders, request.streamId, Buffer.from(encodeHeaderBlock([[":status", "200"]]))), frame(FrameType.rstStream, 0, request.streamId, u32Payload(ErrorCode.refusedStream)));
      },
    });
    const watch = await connectionTo(peer).stream({ method: "GET", path: "/watch", headers: {} });
    expect(watch.status).toBe(200);
    await expect(watch.next()).rejects.toThrow(ApiConnectionError);
    expect(peer.connections.map((c) => c.requests.length)).toEqual([1]);
  });

  it("drops a connection that leaves a PING unanswered, failing the requests on it", async () => {
    peer = await TlsH2Peer.start({ certificate, answerPings: false });
    const started = performance.now();
    const error = await connectionTo(peer, { readIdleMs: 60, pingTimeoutMs: 60 })
      .request({ method: "GET", path: "/hangs", headers: {} })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiConnectionError);
    expect(String(error)).toContain("the connection to the API server was lost");
    expect(peer.connections[0]?.frameTypes).toContain(FrameType.ping);
    // Quiet for 60 ms, then 60 ms without the PING's answer.
    expect(performance.now() - started).toBeGreaterThanOrEqual(100);
  });

  it("keeps a quiet connection whose server answers the PING", async () => {
    let answerLater: (() => void) | undefined;
    peer = await TlsH2Peer.start({ certificate, onRequest: (connection, request) => (answerLater = () => connection.answer(request.streamId, 200, "{}")) });
    // Quiet for 20 ms, a PING, and again: a PING unanswered for 1 s would drop it.
    const pending = connectionTo(peer, { readIdleMs: 20, pingTimeoutMs: 1_000 }).request({ method: "GET", path: "/slow", headers: {} });
    const pings = () => peer?.connections[0]?.frameTypes.filter((t) => t === FrameType.ping).length ?? 0;
    await until("a second PING", () => pings() >= 2);
    answerLater?.();
    expect((await pending).status).toBe(200);
    expect(pings()).toBeGreaterThanOrEqual(2);
  });

  it("reads a watch as the server sends it, without asking for gzip, and its cancel resets the stream", async () => {
    peer = await TlsH2Peer.start({
      certificate,
      onRequest: (connection, request) => {
        connection.send(frame(FrameType.headers, Flag.endHeaders, request.streamId, Buffer.from(encodeHeaderBlock([[":status", "200"]]))), frame(FrameType.data, 0, request.streamId, Buffer.from('{"type":"ADDED"}\n')));
      },
    });
    const watch = await connectionTo(peer).stream({ method: "GET", path: "/watch", headers: {} });
    expect((await watch.next())?.toString()).toBe('{"type":"ADDED"}\n');
    // A watch is never compressed: nothing asks for it.
    expect(field(peer.connections[0]?.requests[0], "accept-encoding")).toBeUndefined();
    watch.cancel();
    expect(await watch.next()).toBeUndefined();
    await until("the RST_STREAM", () => peer?.connections[0]?.frameTypes.includes(FrameType.rstStream) === true);
    expect(peer.connections[0]?.frameTypes).toContain(FrameType.rstStream);
  });

  it("fails with the signal's reason when the caller aborts, and resets the stream", async () => {
    peer = await TlsH2Peer.start({ certificate });
    const abort = new AbortController();
    const pending = connectionTo(peer).request({ method: "GET", path: "/never", headers: {}, signal: abort.signal });
    await until("the request", () => (peer?.connections[0]?.requests.length ?? 0) === 1);
    abort.abort(new Error("stopped"));
    await expect(pending).rejects.toThrow("stopped");
    await until("the RST_STREAM", () => peer?.connections[0]?.frameTypes.includes(FrameType.rstStream) === true);
    expect(peer.connections[0]?.frameTypes).toContain(FrameType.rstStream);
  });

  it("fails with NotHttp2Error when the server's TLS chooses no HTTP/2", async () => {
    peer = await TlsH2Peer.start({ certificate, http2: false });
    const error = await connectionTo(peer).request({ method: "GET", path: "/x", headers: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotHttp2Error);
  });

  it("fails a request to a server whose certificate the CA did not sign, saying why", async () => {
    peer = await TlsH2Peer.start({ certificate });
    const other = await makeTestCertificate();
    const error = await new ApiHttp2Connection({ server: peer.url, tls: { ca: other.cert } }).request({ method: "GET", path: "/x", headers: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiConnectionError);
    expect(String(error)).toMatch(/connecting to https:\/\/127\.0\.0\.1:\d+: .*(certificate|signature|self.signed)/i);
  });
});
