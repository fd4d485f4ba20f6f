import * as net from "node:net";
import { Code, ConnectError, type Interceptor, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";

export interface DriverTransportOptions {
  /** Path of the driver's Unix socket. */
  readonly socketPath: string;
  /**
   * Called once when the driver's socket stops accepting connections after
   * we were connected: the driver died or was restarted. Upstream exits the
   * process then so that Kubernetes restarts the pod and it reconnects
   * cleanly; the caller decides.
   */
  readonly onConnectionLost: (reason: string) => void;
  /** Connect interceptors around every call, outermost first (gRPC logging, metrics). Default none. */
  readonly interceptors?: readonly Interceptor[];
}

/** resolveDriverTransportOptions fills the defaults of every optional field. */
function resolveDriverTransportOptions(options: DriverTransportOptions): Required<DriverTransportOptions> {
  return { ...options, interceptors: options.interceptors ?? [] };
}

/**
 * createDriverTransport opens the Connect gRPC transport to a CSI driver over
 * its Unix socket. This is the only file that imports connect-node.
 *
 * Connect speaks HTTP/2 to "http://localhost"; `createConnection` swaps the
 * TCP dial for the socket. A closed socket alone is not a loss (a session
 * also ends on GOAWAY), so on close we dial the path: if nobody answers, the
 * driver is gone. A dial that connects proves little when the driver is
 * being killed at that moment (its listening socket can outlive the
 * connected one by a moment, and our dial lands in its backlog), so the
 * probe connection is kept open as a watch of its own: when it closes, the
 * check runs again, until a dial is refused or the driver keeps it.
 */
export function createDriverTransport(given: DriverTransportOptions): Transport {
  const options = resolveDriverTransportOptions(given);
  let lost = false;
  let everConnected = false;

  const watch = (socket: net.Socket) => {
    const openedAt = performance.now();
    socket.once("close", () => {
      // A live driver may drop a connection that never speaks HTTP/2 (grpc-go
      // after its 120 s handshake timeout); never re-dial faster than once a second.
      const livedMs = performance.now() - openedAt;
      setTimeout(checkAlive, Math.max(0, 1000 - livedMs)).unref();
    });
  };

  // Bun's http2 client ends the streams of a connection that closes under
  // them with NO_ERROR and no response, which connect-node does not take as
  // a failure: the call would wait out its deadline (--timeout, 20 minutes
  // in some drivers' charts) although nobody can answer it any more. So a
  // call in flight when a driver connection closes fails at once, as
  // Unavailable, which callers treat as "may still be in progress" and retry.
  // With one long-lived session there is one connection, so every call in
  // flight was on it; were a second session open, its calls would be retried too.
  //
  // Every call carries the signal of the connection in use when it starts;
  // a close aborts that signal and hands later calls a fresh one. One shared
  // signal instead of a controller, a combined signal and a set entry per
  // call: a publish or unpublish without a signal of its own allocates
  // nothing here.
  let connectionClosed = new AbortController();
  const failCallsInFlight = () => {
    const closed = connectionClosed;
    connectionClosed = new AbortController();
    closed.abort(new ConnectError("connection to the CSI driver closed during the call", Code.Unavailable));
  };
  const untilConnectionCloses = (signal: AbortSignal | undefined): AbortSignal =>
    signal === undefined ? connectionClosed.signal : AbortSignal.any([signal, connectionClosed.signal]);

  const checkAlive = () => {
    if (lost || !everConnected) return;
    const probe = net.connect(options.socketPath);
    probe.once("connect", () => watch(probe));
    probe.once("error", (error: Error) => {
      if (lost) return;
      lost = true;
      options.onConnectionLost(error.message);
    });
  };

  const transport = createGrpcTransport({
    baseUrl: "http://localhost",
    // CSI drivers are local: keep the session open rather than closing it
    // when idle (default 15 min), so that its socket is there to close when
    // the driver dies. connect-node's timer helper ignores Infinity.
    idleConnectionTimeoutMs: Number.POSITIVE_INFINITY,
    interceptors: [...options.interceptors],
    nodeOptions: {
      createConnection: () => {
        const socket = net.connect(options.socketPath);
        socket.once("connect", () => {
          everConnected = true;
        });
        socket.once("close", () => {
          failCallsInFlight();
          checkAlive();
        });
        return socket;
      },
    },
  });
  return {
    unary: (method, signal, timeoutMs, header, input, contextValues) => transport.unary(method, untilConnectionCloses(signal), timeoutMs, header, input, contextValues),
    stream: (method, signal, timeoutMs, header, input, contextValues) => transport.stream(method, untilConnectionCloses(signal), timeoutMs, header, input, contextValues),
  };
}
