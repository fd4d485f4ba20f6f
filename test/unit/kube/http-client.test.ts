import { afterEach, beforeAll, describe, expect, it } from "bun:test";
import { KubeClient } from "../../../src/kube/http-client";
import type { KubeConnection } from "../../../src/kube/kubeconfig";
import { makeTestCertificate, TlsH2Peer, type TestCertificate } from "./tls-h2-peer";

let certificate: TestCertificate;
let stops: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  certificate = await makeTestCertificate();
});

afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

function connection(server: string): KubeConnection {
  return { server, tls: { ca: certificate.cert }, authHeaders: async () => ({ Authorization: "Bearer t" }) };
}

describe("KubeClient", () => {
  it("reaches an API server over HTTP/2 when its TLS chooses it, one connection for every client of one KubeConnection", async () => {
    const peer = await TlsH2Peer.start({ certificate, onRequest: (c, request) => c.answer(request.streamId, 200, '{"kind":"Status"}') });
    stops.push(() => peer.stop());
    const shared = connection(peer.url);
    const work = new KubeClient({ connection: shared });
    const election = new KubeClient({ connection: shared, userAgent: "csi-attacher/leader-election" });
    expect(await work.get("/a")).toEqual({ kind: "Status" });
    expect(await election.get("/b")).toEqual({ kind: "Status" });
    expect(peer.connections.map((c) => c.requests.length)).toEqual([2]);
  });

  it("opens no HTTP/2 connection of its own when a proxy is configured in the environment, leaving the request to fetch (which honours HTTPS_PROXY and NO_PROXY)", async () => {
    const peer = await TlsH2Peer.start({ certificate, onRequest: (c, request) => c.answer(request.streamId, 200, "{}") });
    stops.push(() => peer.stop());
    const saved = process.env["HTTPS_PROXY"];
    // fetch never proxies a loopback address, so it reaches this HTTP/2-only peer directly, over HTTP/1.1, and fails.
    process.env["HTTPS_PROXY"] = "http://proxy.invalid:3128";
    try {
      const error = await new KubeClient({ connection: connection(peer.url) }).get("/a").catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
    } finally {
      if (saved === undefined) delete process.env["HTTPS_PROXY"];
      else process.env["HTTPS_PROXY"] = saved;
    }
    expect(peer.connections.flatMap((c) => c.requests)).toEqual([]);
  });

  it("goes on over HTTP/1.1 with a server whose TLS chooses no HTTP/2, and stays there", async () => {
    let served = 0;
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      tls: { cert: certificate.cert, key: certificate.key },
      fetch: (request) => {
        served++;
        return Response.json({ path: new URL(request.url).pathname, version: "http/1.1" });
      },
    });
    stops.push(() => server.stop(true));
    const client = new KubeClient({ connection: connection(`https://127.0.0.1:${server.port}`) });
    expect(await client.get("/first")).toEqual({ path: "/first", version: "http/1.1" });
    expect(await client.get("/second")).toEqual({ path: "/second", version: "http/1.1" });
    expect(served).toBe(2);
  });
});
