import { BunSocket } from "../http2/bun-socket";

/**
 * UnixSocket is a connection to the driver's Unix socket on Bun's own
 * socket (BunSocket) instead of `node:net`, whose module alone costs the
 * attacher ~1.3 MiB of anonymous memory and ~2 ms at every start. "connect"
 * is emitted once connected, "error" for a failed dial (once) or a broken
 * connection, "close" once.
 *
 * A failed dial is worded as `node:net` words it (`connect ENOENT /path`,
 * with its code, errno, syscall and address): start-up's "Still connecting"
 * line gives that message as the reason, and the transport maps the code to
 * a gRPC status as connect-node does (test/e2e/grpc-transport-conformance).
 */
export class UnixSocket extends BunSocket {
  constructor(path: string) {
    super();
    const dialFailed = (e: unknown) => {
      // Bun reports a failed dial twice over, to the callback and through its promise.
      if (!this.failed) this.emitError(nodeDialError(e, path));
      this.closeOnce();
    };
    // Dialled once the caller has added its listeners: a Unix socket's
    // dial can be answered before Bun.connect returns, as node:net never is.
    queueMicrotask(() => this.dial(path, dialFailed));
  }

  private dial(path: string, dialFailed: (e: unknown) => void): void {
    Bun.connect({
      unix: path,
      socket: {
        open: (socket) => {
          if (this.opened(socket)) this.becameReady();
        },
        data: (_socket, data) => this.emit("data", data),
        drain: () => this.flush(),
        close: () => this.closeOnce(),
        error: (_socket, e) => this.emitError(e),
        connectError: (_socket, e) => dialFailed(e),
      },
    }).catch(dialFailed);
  }
}

/** DialError is a failed dial as `node:net` describes one. */
interface DialError extends Error {
  readonly code: string;
  readonly errno: number | undefined;
  readonly syscall: "connect";
  readonly address: string;
}

/** nodeDialError words Bun's failed dial of `path` ("Failed to connect", with a code) as `node:net` does. */
function nodeDialError(e: unknown, path: string): DialError {
  const fields = typeof e === "object" && e !== null ? (e as { code?: unknown; errno?: unknown }) : {};
  // node:net says UNKNOWN for an error it has no name for.
  const code = typeof fields.code === "string" ? fields.code : "UNKNOWN";
  const errno = typeof fields.errno === "number" ? fields.errno : undefined;
  return Object.assign(new Error(`connect ${code} ${path}`), { code, errno, syscall: "connect" as const, address: path });
}
