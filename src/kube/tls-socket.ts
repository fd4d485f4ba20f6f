import { BunSocket } from "../http2/bun-socket";
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

/**
 * TlsSocket is a TLS connection to the API server on Bun's own socket
 * (BunSocket), as the HTTP/2 session reads it.
 *
 * The handshake offers only "h2" and checks the server's certificate
 * against `ca` (or the system's roots) and its name, as fetch does, unless
 * `rejectUnauthorized` is false. Frames written before the handshake ends
 * wait for it; a server that chooses no HTTP/2 gets none of them and the
 * dial fails with NotHttp2Error. "connect" is emitted once the handshake
 * succeeded, "error" for a failed dial or handshake, "close" once.
 */
export class TlsSocket extends BunSocket {
  constructor(dial: TlsDial) {
    super();
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
          this.opened(socket);
        },
        handshake: (socket, authorized, authorizationError) => {
          if (verify && !authorized) return this.fail(socket, authorizationError ?? new Error(`TLS handshake with ${dial.server} failed`));
          if (socket.alpnProtocol !== "h2") return this.fail(socket, new NotHttp2Error(dial.server));
          this.becameReady();
        },
        data: (_socket, data) => this.emit("data", data),
        drain: () => this.flush(),
        close: () => {
          // A server that hangs up during the handshake (Bun then calls neither handshake nor error) failed the dial too.
          if (!this.isReady && !this.failed) this.emitError(new Error(`TLS handshake with ${dial.server} failed: the connection closed`));
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
}
