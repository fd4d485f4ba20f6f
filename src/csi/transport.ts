import * as net from "node:net";
import type { Transport } from "@connectrpc/connect";
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
}

/**
 * createDriverTransport opens the Connect gRPC transport to a CSI driver over
 * its Unix socket. This is the only file that imports connect-node.
 *
 * Connect speaks HTTP/2 to "http://localhost"; `createConnection` swaps the
 * TCP dial for the socket. A closed socket alone is not a loss (HTTP/2
 * sessions are also closed when idle), so on close we dial the path once: if
 * nobody answers, the driver is gone.
 */
export function createDriverTransport(options: DriverTransportOptions): Transport {
  let lost = false;
  let everConnected = false;

  const checkAlive = () => {
    if (lost || !everConnected) return;
    const probe = net.connect(options.socketPath);
    probe.once("connect", () => probe.destroy());
    probe.once("error", (error: Error) => {
      if (lost) return;
      lost = true;
      options.onConnectionLost(error.message);
    });
  };

  return createGrpcTransport({
    baseUrl: "http://localhost",
    // CSI drivers are local: a dead peer is seen at once through the socket,
    // so keep one session open rather than closing it when idle.
    idleConnectionTimeoutMs: 2 ** 31 - 1,
    nodeOptions: {
      createConnection: () => {
        const socket = net.connect(options.socketPath);
        socket.once("connect", () => {
          everConnected = true;
        });
        socket.once("close", checkAlive);
        return socket;
      },
    },
  });
}
