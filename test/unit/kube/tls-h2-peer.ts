import { $ } from "bun";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import * as tls from "node:tls";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { frame, FrameType, Flag } from "../../../src/http2/frames";
import { HpackDecoder } from "../../../src/http2/hpack-decoder";
import type { HeaderField } from "../../../src/http2/hpack-decoder";
import { encodeHeaderBlock } from "../../../src/http2/hpack-encoder";
import { ClientFrameReader } from "../http2/client-frame-reader";

/** A certificate for 127.0.0.1 and localhost, made once per test file. */
export interface TestCertificate {
  readonly cert: string;
  readonly key: string;
}

export async function makeTestCertificate(): Promise<TestCertificate> {
  const dir = mkdtempSync(join(tmpdir(), "tls-h2-peer-"));
  try {
    await $`openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ${dir}/key.pem -out ${dir}/cert.pem -days 1 -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1`.quiet();
    return { cert: readFileSync(join(dir, "cert.pem"), "utf8"), key: readFileSync(join(dir, "key.pem"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One request as the peer read it: its stream and decoded header fields. */
export interface SeenRequest {
  readonly streamId: number;
  readonly fields: HeaderField[];
}

/**
 * TlsH2Connection is one client connection to a TlsH2Peer: it parses what
 * the client sends into frames and requests, answers the client's SETTINGS
 * (with an empty one of its own first, as a server must), and sends
 * whatever frames a test scripts.
 */
export class TlsH2Connection {
  readonly requests: SeenRequest[] = [];
  readonly frameTypes: number[] = [];
  private readonly decoder = new HpackDecoder(4096);
  private readonly reader = new ClientFrameReader();

  constructor(
    readonly socket: tls.TLSSocket,
    private readonly onRequest: (connection: TlsH2Connection, request: SeenRequest) => void,
    private readonly answerPings: boolean,
  ) {
    socket.write(frame(FrameType.settings, 0, 0));
    socket.on("data", (chunk: Buffer) => this.read(chunk));
    socket.on("error", () => undefined);
  }

  send(...frames: Buffer[]): void {
    this.socket.write(Buffer.concat(frames));
  }

  /** answer sends a whole answer on `streamId`: a status, and a body when one is given. */
  answer(streamId: number, status: number, body?: string): void {
    const headers = frame(FrameType.headers, Flag.endHeaders | (body === undefined ? Flag.endStream : 0), streamId, Buffer.from(encodeHeaderBlock([[":status", String(status)]])));
    this.send(headers, ...(body === undefined ? [] : [frame(FrameType.data, Flag.endStream, streamId, Buffer.from(body))]));
  }

  private read(chunk: Buffer): void {
    for (const { type, flags, streamId, payload } of this.reader.read(chunk)) {
      this.frameTypes.push(type);
      if (type === FrameType.settings && (flags & Flag.ack) === 0) this.send(frame(FrameType.settings, Flag.ack, 0));
      if (type === FrameType.ping && (flags & Flag.ack) === 0 && this.answerPings) this.send(frame(FrameType.ping, Flag.ack, 0, payload));
      if (type === FrameType.headers) {
        const request = { streamId, fields: this.decoder.decode(payload) };
        this.requests.push(request);
        this.onRequest(this, request);
      }
    }
  }
}

export interface TlsH2PeerOptions {
  readonly certificate: TestCertificate;
  /** Offer "h2" in ALPN (default true); false stands for a server of HTTP/1.1 only. */
  readonly http2?: boolean;
  /** Acknowledge PINGs (default true). */
  readonly answerPings?: boolean;
  /** Called for each request's HEADERS; the test answers through the connection. */
  readonly onRequest?: (connection: TlsH2Connection, request: SeenRequest) => void;
}

/**
 * TlsH2Peer is a scripted HTTP/2 server over TLS on loopback, for rules of
 * the API server's connection that a real kube-apiserver will not play out
 * on demand: refusals, silence, a server without HTTP/2.
 */
export class TlsH2Peer {
  readonly connections: TlsH2Connection[] = [];
  private readonly server: tls.Server;

  private constructor(options: TlsH2PeerOptions) {
    const { cert, key } = options.certificate;
    this.server = tls.createServer({ cert, key, ...(options.http2 === false ? {} : { ALPNProtocols: ["h2"] }) }, (socket) => {
      this.connections.push(new TlsH2Connection(socket, options.onRequest ?? (() => undefined), options.answerPings ?? true));
    });
  }

  static async start(options: TlsH2PeerOptions): Promise<TlsH2Peer> {
    const peer = new TlsH2Peer(options);
    await new Promise<void>((resolve) => peer.server.listen(0, "127.0.0.1", resolve));
    return peer;
  }

  get url(): string {
    return `https://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  async stop(): Promise<void> {
    for (const connection of this.connections) connection.socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** field is the value of one header field of a request, if it has it. */
export function field(request: SeenRequest | undefined, name: string): string | undefined {
  return request?.fields.find(([n]) => n === name)?.[1];
}
