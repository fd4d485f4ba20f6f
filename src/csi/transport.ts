import * as net from "node:net";
import type { Interceptor, Transport } from "@connectrpc/connect";
import { createUnaryGrpcTransport } from "./unary-grpc-transport";

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
 * createDriverTransport opens the gRPC transport to a CSI driver over its
 * Unix socket (createUnaryGrpcTransport: one HTTP/2 session, calls in
 * flight failed at once as Unavailable when it closes) and watches that the
 * driver stays there.
 *
 * A closed socket alone is not a loss (a session also ends on GOAWAY), so on
 * close we dial the path: if nobody answers, the driver is gone. A dial that
 * connects proves little when the driver is being killed at that moment (its
 * listening socket can outlive the connected one by a moment, and our dial
 * lands in its backlog), so the probe connection is kept open as a watch of
 * its own: when it closes, the check runs again, until a dial is refused or
 * the driver keeps it.
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

  return createUnaryGrpcTransport({
    interceptors: options.interceptors,
    createConnection: () => {
      const socket = net.connect(options.socketPath);
      socket.once("connect", () => {
        everConnected = true;
      });
      socket.once("close", checkAlive);
      return socket;
    },
  });
}
