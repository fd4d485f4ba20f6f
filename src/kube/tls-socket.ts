import type { Socket } from "bun";
import type { SessionSocket } from "../http2/client-session";
import type { KubeTlsOptions } from "./kubeconfig";

/** The API server's TLS did not choose HTTP/2 (a proxy or server of HTTP/1.1 only): the client goes on over fetch. */
export class NotHttp2Error extends Error {
  constructor(server: string) {
    super(`${server} did not offer HTTP/2 in its TLS handshake (ALPN)`);
    this.name = "NotHttp2Error";
  }
}

/** The ALPN list this side offers, in TLS's wire form (RFC 7301: each name behind its length): h2 only, since HTTP/1.1 goes over fetch. */
const offerHttp2 = Buffer.from([2, 0x68, 0x32]);

export interface TlsDial {
  /** The URL's host name or address (an IPv6 one without brackets). */
  readonly hostname: string;
  readonly port: number;
  /** The server named in errors. */
  readonly server: string;
  readonly tls: KubeTlsOptions;
}

type Listener = (...args: never[]) => void;

/**
 * TlsSocket is a TLS connection to the API server on Bun's own socket
 * (`Bun.connect`), as the HTTP/2 session reads it. Bun's `node:tls` wraps
 * the same socket in a stream Duplex per connection, whose events and
 * buffers cost the floor client 1.3x the anonymous memory of this one in a
 * burst (issue 36, tenth session).
 *
 * The handshake offers only "h2" and checks the server's certificate
 * against `ca` (or the system's roots) and its name, as fetch does, unless
 * `rejectUnauthorized` is false. Frames written before the handshake ends
 * wait for it; a server that chooses no HTTP/2 gets none of them and the
 * dial fails with NotHttp2Error. "connect" is emitted once the handshake
 * succeeded, "error" for a failed dial or handshake, "close" once.
 */
export class TlsSocket implements SessionSocket {
  private socket: Socket | undefined;
  /** The handshake succeeded: frames may go. */
  private ready = false;
  /** end() or destroy() came before the socket existed. */
  private closed = false;
  private closeEmitted = false;
  private errorEmitted = false;
  private readonly pending: Buffer[] = [];
  private readonly listeners = new Map<string, Listener[]>();
  /** unref() before the socket existed: applied once it does. */
  private wantRef = true;

  constructor(dial: TlsDial) {
    const { ca, cert, key, rejectUnauthorized } = dial.tls;
    const verify = rejectUnauthorized !== false;
    Bun.connect({
      hostname: dial.hostname,
      port: dial.port,
      tls: {
        ...(ca === undefined ? {} : { ca }),
        ...(cert === undefined ? {} : { cert }),
        ...(key === undefined ? {} : { key }),
        rejectUnauthorized: verify,
        ALPNProtocols: offerHttp2,
      },
      socket: {
        open: (socket) => {
          this.socket = socket;
          if (this.closed) socket.terminate();
          else if (!this.wantRef) socket.unref();
        },
        handshake: (socket, authorized, authorizationError) => {
          if (verify && !authorized) return this.fail(socket, authorizationError ?? new Error(`TLS handshake with ${dial.server} failed`));
          if (socket.alpnProtocol !== "h2") return this.fail(socket, new NotHttp2Error(dial.server));
          this.ready = true;
          this.emit("connect");
          this.flush();
        },
        data: (_socket, data) => this.emit("data", data),
        drain: () => this.flush(),
        close: () => {
          // A server that hangs up during the handshake (Bun then calls neither handshake nor error) failed the dial too.
          if (!this.ready && !this.errorEmitted) this.emitError(new Error(`TLS handshake with ${dial.server} failed: the connection closed`));
          this.closeOnce();
        },
        error: (_socket, e) => this.emitError(e),
        connectError: (_socket, e) => {
          this.emitError(e);
          this.closeOnce();
        },
      },
    }).catch((e: unknown) => {
      this.emitError(e);
      this.closeOnce();
    });
  }

  on(event: string, listener: Listener): this {
    const list = this.listeners.get(event);
    if (list === undefined) this.listeners.set(event, [listener]);
    else list.push(listener);
    return this;
  }

  write(bytes: Buffer): void {
    if (this.closed) return;
    this.pending.push(bytes);
    this.flush();
  }

  end(): void {
    if (this.socket === undefined) this.closed = true;
    this.socket?.end();
  }

  destroy(): void {
    if (this.socket === undefined) this.closed = true;
    this.socket?.terminate();
  }

  ref(): void {
    this.wantRef = true;
    this.socket?.ref();
  }

  unref(): void {
    this.wantRef = false;
    this.socket?.unref();
  }

  /** flush writes what is pending, as much as the socket takes now; the rest waits for "drain". */
  private flush(): void {
    const socket = this.socket;
    if (socket === undefined || !this.ready) return;
    while (this.pending.length > 0) {
      const head = this.pending[0] as Buffer;
      const written = socket.write(head);
      if (written < head.length) {
        this.pending[0] = head.subarray(Math.max(0, written));
        return;
      }
      this.pending.shift();
    }
  }

  private fail(socket: Socket, error: unknown): void {
    this.pending.length = 0;
    this.emitError(error);
    socket.terminate();
  }

  private emitError(error: unknown): void {
    this.errorEmitted = true;
    this.emit("error", error);
  }

  private closeOnce(): void {
    if (this.closeEmitted) return;
    this.closeEmitted = true;
    this.socket = undefined;
    this.emit("close");
  }

  private emit(event: string, ...args: unknown[]): void {
    for (const listener of this.listeners.get(event) ?? []) (listener as (...a: unknown[]) => void)(...args);
  }
}
