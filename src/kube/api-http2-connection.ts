import { Http2ClientSession, type ClientStream, type HeaderRecord, type StreamEnd } from "../http2/client-session";
import { ArrivingBody } from "../http2/arriving-body";
import { ErrorCode } from "../http2/frames";
import type { HeaderField } from "../http2/hpack-decoder";
import type { KubeTlsOptions } from "./kubeconfig";
import { NotHttp2Error, TlsSocket } from "./tls-socket";
import { errorMessage } from "../util/error-message";

/** One request to the API server: its headers are the caller's (authorization, accept, ...), lowercase or not. */
export interface ApiRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly signal?: AbortSignal;
}

/** An answer read whole, its body decoded from gzip when the server compressed it. */
export interface WholeAnswer {
  readonly status: number;
  readonly body: Buffer;
}

/** An answer read as it arrives (a watch): `next` gives each piece of the body in order, undefined at its end. */
export interface StreamedAnswer {
  readonly status: number;
  next(): Promise<Buffer | undefined>;
  /** cancel resets the stream: the server stops sending it. */
  cancel(): void;
}

/** The connection to the API server failed under a request, or before it went; the message says how, the caller names the request. */
export class ApiConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ApiConnectionError";
  }
}

/**
 * The health check of an HTTP/2 connection, as client-go configures Go's
 * (`HTTP2_READ_IDLE_TIMEOUT_SECONDS`, `HTTP2_PING_TIMEOUT_SECONDS`): after
 * 30 s without a frame from the server a PING goes, and a connection that
 * does not answer it within 15 s is dropped, with every request on it. A
 * half-open connection would otherwise hold every watch and request until
 * the kernel gives up on it, many minutes later.
 */
export interface HealthCheck {
  readonly readIdleMs: number;
  readonly pingTimeoutMs: number;
}

export const clientGoHealthCheck: HealthCheck = { readIdleMs: 30_000, pingTimeoutMs: 15_000 };

/** How long the TCP connect and TLS handshake may take together: Go's dialer's 30 s. */
const dialTimeoutMs = 30_000;

export interface ApiHttp2ConnectionOptions {
  /** The API server's https URL, without a trailing slash. */
  readonly server: string;
  readonly tls: KubeTlsOptions;
  /** Default clientGoHealthCheck. */
  readonly healthCheck?: HealthCheck;
}

/**
 * ApiHttp2Connection carries every request to one API server as a stream
 * of one HTTP/2 connection over TLS, as client-go does, on our own HTTP/2
 * client (http2/client-session.ts) and Bun's TLS socket (tls-socket.ts).
 * fetch's HTTP/1.1 opened a connection per request in flight, and the
 * attacher on it spent 1.4-1.7x the CPU of a burst it spends on this
 * (issue 36, tenth session: bench/results/README.md).
 *
 * The connection is dialled at the first request and again after it ends
 * (GOAWAY, a lost or unhealthy connection). A request the server refused
 * unprocessed (REFUSED_STREAM, or above a GOAWAY's last stream) is sent
 * once more on a new connection, as Go's transport retries it. A server
 * whose TLS does not choose HTTP/2 fails the request with NotHttp2Error:
 * the caller goes on over HTTP/1.1.
 */
export class ApiHttp2Connection {
  private readonly url: URL;
  private readonly healthCheck: HealthCheck;
  private session: Http2ClientSession | undefined;

  constructor(private readonly options: ApiHttp2ConnectionOptions) {
    this.url = new URL(options.server);
    this.healthCheck = options.healthCheck ?? clientGoHealthCheck;
  }

  /**
   * request sends one request and reads its answer whole. It asks for gzip,
   * as Go's transport does for client-go (the server compresses a large
   * list, never a watch), and decodes what comes compressed.
   */
  async request(req: ApiRequest): Promise<WholeAnswer> {
    const end = await this.exchange(req, undefined);
    const status = Number(end.headers?.[":status"] ?? 0);
    const raw = end.chunks.length === 1 ? (end.chunks[0] as Buffer) : Buffer.concat(end.chunks);
    const encoding = end.headers?.["content-encoding"];
    // Bun's own gunzip: node:zlib is a module to load at start for an answer that is rarely compressed.
    return { status, body: encoding === "gzip" ? Buffer.from(Bun.gunzipSync(raw as Uint8Array<ArrayBuffer>)) : raw };
  }

  /** stream sends one request and resolves with the answer's status once its headers came; the body follows through `next`. */
  stream(req: ApiRequest): Promise<StreamedAnswer> {
    return new Promise((resolve, reject) => {
      let stream: ClientStream | undefined;
      const body = new ArrivingBody((octets) => stream?.release(octets));
      let answered = false;
      const answer = (status: number) => {
        answered = true;
        resolve({
          status,
          next: () => body.next(),
          cancel: () => {
            stream?.reset(ErrorCode.cancel);
            body.finish();
          },
        });
      };
      this.exchange(req, {
        onStarted: (started) => (stream = started),
        onHeaders: (headers) => answer(Number(headers[":status"] ?? 0)),
        onData: (piece) => body.push(piece),
      }).then(
        (end) => {
          if (!answered) {
            if (end.headers === undefined) return reject(new ApiConnectionError("the API server ended the stream without an answer"));
            answer(Number(end.headers[":status"] ?? 0));
          }
          // A stream reset after its headers: the body is incomplete.
          const cut = end.resetCode !== undefined && end.resetCode !== ErrorCode.noError;
          body.finish(cut ? new ApiConnectionError(`the API server reset the stream (HTTP/2 error code ${end.resetCode})`) : undefined);
        },
        (e: unknown) => {
          if (!answered) reject(e);
          body.finish(e);
        },
      );
    });
  }

  /**
   * exchange runs one request to its end, once more on a new connection if
   * the server refused it unprocessed. It rejects with the signal's reason
   * on abort, and with ApiConnectionError (or NotHttp2Error) when the
   * connection failed.
   */
  private async exchange(req: ApiRequest, receiver: Receiver | undefined): Promise<Extract<StreamEnd, { kind: "closed" }>> {
    for (let attempt = 1; ; attempt++) {
      const end = await this.once(req, receiver);
      const refused = end.resetCode === ErrorCode.refusedStream && end.headers === undefined;
      if (!refused || attempt === 2) return end;
    }
  }

  private once(req: ApiRequest, receiver: Receiver | undefined): Promise<Extract<StreamEnd, { kind: "closed" }>> {
    const { signal } = req;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        stream.reset(ErrorCode.cancel);
        reject(signal?.reason);
      };
      const stream = this.currentSession().request(
        this.headerFields(req, receiver === undefined),
        req.body === undefined ? emptyBody : Buffer.from(req.body),
        (end) => {
          signal?.removeEventListener("abort", onAbort);
          if (end.kind === "closed") return resolve(end);
          const cause = end.dialError;
          if (cause instanceof NotHttp2Error) return reject(cause);
          reject(new ApiConnectionError(cause === undefined ? "the connection to the API server was lost" : `connecting to ${this.options.server}: ${errorMessage(cause)}`, { cause }));
        },
        receiver,
      );
      receiver?.onStarted(stream);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** headerFields is the request's header block; `gzip` asks for a compressed answer, for one read whole (request() decodes it). */
  private headerFields(req: ApiRequest, gzip: boolean): HeaderField[] {
    const fields: HeaderField[] = [
      [":method", req.method],
      [":scheme", "https"],
      [":authority", this.url.host],
      [":path", req.path],
    ];
    for (const name in req.headers) {
      const lower = name.toLowerCase();
      // HTTP/2 carries no connection-specific fields (RFC 9113 section 8.2.2).
      if (connectionFields.has(lower)) continue;
      fields.push([lower, req.headers[name] as string]);
    }
    if (gzip) fields.push(["accept-encoding", "gzip"]);
    return fields;
  }

  /** currentSession is the live connection's session, dialled now if there is none. */
  private currentSession(): Http2ClientSession {
    if (this.session?.usable()) return this.session;
    const hostname = this.url.hostname.replace(/^\[(.*)\]$/, "$1");
    const socket = new TlsSocket({ hostname, port: Number(this.url.port || "443"), server: this.options.server, tls: this.options.tls });
    let health: { stop(): void } | undefined;
    const session = new Http2ClientSession(socket, {
      onGone: () => {
        if (this.session === session) this.session = undefined;
        health?.stop();
      },
    });
    health = this.watchHealth(session);
    // A dial that neither connects nor fails (a black-holed address) fails its requests after Go's dial timeout.
    const dialDeadline = setTimeout(() => session.destroy(), dialTimeoutMs);
    dialDeadline.unref();
    socket.on("connect", () => clearTimeout(dialDeadline));
    this.session = session;
    return session;
  }

  /**
   * watchHealth pings a connection quiet for readIdleMs and drops it when
   * the PING is not answered within pingTimeoutMs. Its timer is set for
   * when the connection would have been quiet that long, not on a tick: an
   * attacher with nothing to do is not woken for nothing.
   */
  private watchHealth(session: Http2ClientSession): { stop(): void } {
    const { readIdleMs, pingTimeoutMs } = this.healthCheck;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = (ms: number, then: () => void) => {
      timer = setTimeout(then, ms);
      timer.unref();
    };
    const check = () => {
      const quiet = session.quietForMs();
      if (quiet < readIdleMs) return arm(readIdleMs - quiet, check);
      let answered = false;
      session.ping(() => (answered = true));
      arm(pingTimeoutMs, () => (answered ? check() : session.destroy()));
    };
    arm(readIdleMs, check);
    return { stop: () => clearTimeout(timer) };
  }
}

interface Receiver {
  onStarted(stream: ClientStream): void;
  onHeaders(headers: HeaderRecord): void;
  onData(piece: Buffer): void;
}

const emptyBody = Buffer.alloc(0);

/** Fields HTTP/1.1 may carry that HTTP/2 forbids. */
const connectionFields: ReadonlySet<string> = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host"]);
