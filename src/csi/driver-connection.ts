import type { Interceptor, Transport } from "@connectrpc/connect";
import { clientPreface, frame, FrameType } from "../http2/frames";
import { errorMessage } from "../util/error-message";
import { socketFileIdentity } from "./socket-file-identity";
import { createUnaryGrpcTransport } from "./unary-grpc-transport";
import { UnixSocket } from "./unix-socket";

export interface DriverConnectionOptions {
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

/** How long checkDriverNow waits for a connected driver to answer the HTTP/2 preface. */
const driverAnswerMs = 1_000;

/** The HTTP/2 client connection preface and an empty SETTINGS frame (RFC 9113 §3.4): a server answers with its own SETTINGS. */
const http2ClientPreface = Buffer.concat([clientPreface, frame(FrameType.settings, 0, 0)]);

/** resolveDriverConnectionOptions fills the defaults of every optional field. */
function resolveDriverConnectionOptions(options: DriverConnectionOptions): Required<DriverConnectionOptions> {
  return { ...options, interceptors: options.interceptors ?? [] };
}

/** DriverConnection is the transport to the driver and the check of its liveness. */
export interface DriverConnection {
  readonly transport: Transport;
  /**
   * checkDriverNow dials the socket once and asks for the driver's HTTP/2
   * SETTINGS, resolving when that is settled, a loss (a refused dial, or a
   * connection closed unanswered) having been reported first. At a stop: a
   * driver that went away during the drain failed the call in flight at
   * once, and the drain can end before the dial its closed socket started
   * is answered, or that dial lands in the dying driver's backlog; checked
   * this way, the loss is judged before the process exits instead of
   * dropped.
   */
  checkDriverNow(): Promise<void>;
}

/**
 * createDriverConnection opens the gRPC transport to a CSI driver over its
 * Unix socket (createUnaryGrpcTransport: one HTTP/2 session, calls in
 * flight failed at once as Unavailable when it closes) and watches, through
 * a DriverLiveness, that the driver stays there.
 */
export function createDriverConnection(given: DriverConnectionOptions): DriverConnection {
  const options = resolveDriverConnectionOptions(given);
  const liveness = new DriverLiveness(options.socketPath, options.onConnectionLost);
  const transport = createUnaryGrpcTransport({
    interceptors: options.interceptors,
    createConnection: () => {
      const socket = new UnixSocket(options.socketPath);
      liveness.watchTransportSocket(socket);
      return socket;
    },
  });
  return { transport, checkDriverNow: () => liveness.checkNow() };
}

/**
 * DriverLiveness watches that the driver stays on its socket and reports,
 * once, when it is gone.
 *
 * A closed socket alone is not a loss (a session also ends on GOAWAY), so on
 * close we dial the path: if nobody answers, the driver is gone. A dial that
 * connects proves little when the driver is being killed at that moment (its
 * listening socket can outlive the connected one by a moment, and our dial
 * lands in its backlog), so the probe connection is kept open as a watch of
 * its own: when it closes, the check runs again, until a dial is refused or
 * the driver keeps it.
 *
 * A dial that reaches a driver can still have reached another one: a
 * restarted driver binds its socket as a new file on the same path, and
 * when its restart is faster than our dial (a probe that landed in the dying
 * driver's backlog re-dials only after a second) the dial connects to it. So
 * every connection, the transport's and the probes', compares the socket
 * file with the one the first connection found, and a new file is a loss:
 * the driver we were connected to is gone, as upstream's exit wants it known.
 */
class DriverLiveness {
  /** Set by the first loss reported: from then on nothing is dialled and nothing reported again. */
  private lost = false;
  /**
   * Set once a transport connection has connected. Until then a refused
   * dial is a driver that has not started yet, which start-up waits for,
   * not a driver that went away.
   */
  private everConnected = false;
  /** The socket file (socketFileIdentity) the first transport connection found: the driver this process works with. */
  private driverFile: string | undefined;

  constructor(
    private readonly socketPath: string,
    private readonly onConnectionLost: (reason: string) => void,
  ) {}

  /** watchTransportSocket follows one of the transport's connections: its connect arms the watch, its close starts a check. */
  watchTransportSocket(socket: UnixSocket): void {
    // A UnixSocket emits "connect" and "close" at most once each.
    socket.on("connect", () => {
      this.everConnected = true;
      this.sameDriver();
    });
    socket.on("close", () => this.checkInBackground());
  }

  /** checkNow dials once and asks the driver for its HTTP/2 SETTINGS (see DriverConnection.checkDriverNow). */
  checkNow(): Promise<void> {
    return this.dial((probe) => answersHttp2(probe, (reason) => this.reportLost(reason)));
  }

  /** checkInBackground dials once and, connected, keeps the probe as a watch of its own. */
  private checkInBackground(): void {
    void this.dial((probe) => this.keepAsWatch(probe));
  }

  /** keepAsWatch checks again when a probe that connected closes. */
  private keepAsWatch(probe: UnixSocket): void {
    const openedAt = performance.now();
    probe.on("close", () => {
      // A live driver may drop a connection that never speaks HTTP/2 (grpc-go
      // after its 120 s handshake timeout); never re-dial faster than once a second.
      const livedMs = performance.now() - openedAt;
      setTimeout(() => this.checkInBackground(), Math.max(0, 1000 - livedMs)).unref();
    });
  }

  /** dial connects once to the socket: a connection goes to `connected` (its promise ends the dial's), a refused dial reports the loss. */
  private dial(connected: (probe: UnixSocket) => Promise<void> | void): Promise<void> {
    return new Promise((resolve) => {
      if (this.lost || !this.everConnected) return resolve();
      const probe = new UnixSocket(this.socketPath);
      probe.on("connect", () => {
        if (this.sameDriver()) return void Promise.resolve(connected(probe)).then(resolve);
        probe.destroy();
        resolve();
      });
      // A failed dial, or a probe kept as a watch that breaks: the driver is gone.
      probe.on("error", (error: unknown) => {
        this.reportLost(errorMessage(error));
        resolve();
      });
    });
  }

  /** sameDriver records the socket file at the first connection and, at each later one, reports a loss (answering false) when the file is not that one. */
  private sameDriver(): boolean {
    const file = socketFileIdentity(this.socketPath);
    if (this.driverFile === undefined) {
      this.driverFile = file;
      return true;
    }
    if (file === this.driverFile) return true;
    this.reportLost(file === undefined ? `the driver's socket ${this.socketPath} is gone` : `the driver's socket ${this.socketPath} is a new file: another driver listens there`);
    return false;
  }

  private reportLost(reason: string): void {
    if (this.lost) return;
    this.lost = true;
    this.onConnectionLost(reason);
  }
}

/**
 * answersHttp2 asks a connected probe for the driver's HTTP/2 SETTINGS: a
 * live driver answers at once, while a dying one's listening socket may
 * still accept and then closes the connection unanswered (a loss, told to
 * `reportLost`). A driver silent for driverAnswerMs counts as there: the
 * exit goes on.
 */
function answersHttp2(probe: UnixSocket, reportLost: (reason: string) => void): Promise<void> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (lostReason?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (lostReason !== undefined) reportLost(lostReason);
      probe.destroy();
      resolve();
    };
    const timer = setTimeout(() => settle(), driverAnswerMs);
    probe.on("data", () => settle());
    probe.on("error", (error: unknown) => settle(errorMessage(error)));
    probe.on("close", () => settle("the driver closed the connection without answering"));
    probe.write(http2ClientPreface);
  });
}
