/**
 * The start-up step that brings up the CSI driver: connect to its socket,
 * wait until it answers Probe, learn its name and capabilities in
 * upstream's order, and decide what a connection lost later means. Each
 * file of src/startup/ is named for what its step hands on (api-server.ts,
 * cluster-caches.ts, http-endpoint.ts); this one hands on the CsiDriver.
 */
import { statSync } from "node:fs";
import { Code } from "@connectrpc/connect";
import type { Config } from "../cli/config";
import { inTreePluginForDriver } from "../controller/migration/in-tree-plugins";
import { CsiClient, type DriverCapabilities } from "../csi/csi-client";
import { createDriverConnection } from "../csi/driver-connection";
import { UnixSocket } from "../csi/unix-socket";
import { stopSignalSpreadMs, type DriverLoss } from "../csi/driver-loss";
import { CsiCallError } from "../csi/errors";
import { createGrpcLogInterceptor, grpcLogLevel } from "../csi/grpc-log-interceptor";
import { createOperationMetricsInterceptor } from "../csi/operation-metrics-interceptor";
import type { Logger } from "../log/logger";
import { abortableSleep } from "../util/abortable-sleep";
import { Backoff, type BackoffPolicy } from "../util/backoff";
import { realClock } from "../util/clock";
import { errorMessage } from "../util/error-message";
import { terminationLogPath, writeTerminationMessage } from "../util/termination-message";
import { DriverStartupError, StartupFailure } from "./errors";
import type { HttpEndpoint } from "./http-endpoint";
import type { Shutdown } from "./shutdown-signals";

export interface CsiDriverOptions {
  /** --csi-address, --timeout (each Probe's deadline), and what decides whether gRPC payloads are logged. */
  readonly config: Pick<Config, "csiAddress" | "timeoutMs" | "verbosity" | "vmodule" | "maxGrpcLogLength">;
  /** The process logger: start-up's probes, the lost driver, gRPC payloads at -v=5. */
  readonly log: Logger;
  /** Told that the driver answered Probe; its metrics, if kept, time every CSI call. */
  readonly endpoint: Pick<HttpEndpoint, "readiness" | "metrics">;
  /** How the work stops: on its abort start-up stops waiting for the driver; whether a signal came decides what a lost driver is logged as. */
  readonly shutdown: Pick<Shutdown, "work" | "signalled">;
  /** Told of a lost connection: it stops the work at once and judges whether the loss is part of a shutdown. */
  readonly driverLoss: DriverLoss;
}

/** CsiDriver is the driver the attacher works with: its client, what it said at start, and the check that it is still there. */
export interface CsiDriver {
  readonly csi: CsiClient;
  readonly info: DriverInfo;
  readonly checkDriverNow: () => Promise<void>;
}

/**
 * connectToDriver connects to the CSI driver's socket, waits until it
 * answers Probe, and learns its name and capabilities. Returns undefined
 * when the work was stopped during the wait; throws StartupFailure when the
 * driver answered wrongly. A connection lost later stops the work (see
 * DriverLoss), and main.ts exits 1 unless a stop signal came with it.
 */
export async function connectToDriver(options: CsiDriverOptions): Promise<CsiDriver | undefined> {
  const { config, log, endpoint } = options;
  const signal = options.shutdown.work;
  const { metrics } = endpoint;
  const { transport, checkDriverNow } = createDriverConnection({
    socketPath: config.csiAddress,
    // Logging outermost and metrics inside it, as csi-lib-utils chains them, so
    // a call's recorded time leaves out the logging of its payloads.
    interceptors: [
      // Left out altogether unless -v=5, or a --vmodule rule at 5 or more, can print its lines.
      ...(config.verbosity >= grpcLogLevel || config.vmodule.some((rule) => rule.verbosity >= grpcLogLevel) ? [createGrpcLogInterceptor({ log, maxLogLength: config.maxGrpcLogLength })] : []),
      ...(metrics === undefined ? [] : [createOperationMetricsInterceptor({ observer: metrics.csiOperations })]),
    ],
    onConnectionLost: (reason) => {
      if (!options.shutdown.signalled.aborted) log.info("CSI driver connection lost, waiting for a stop signal that may come with it", { spread: `${stopSignalSpreadMs}ms` });
      // The work stops at once (a leader gives its Lease back); the wait only names the exit.
      void options.driverLoss.note()?.then((meaning) => {
        if (meaning === "shutting-down") {
          // The pod is being deleted and its driver stopped too (often first): the drain goes on.
          log.info("CSI driver went away while shutting down", { address: config.csiAddress, reason });
          return;
        }
        // Upstream exits so that Kubernetes restarts the pod and it reconnects cleanly: main.ts exits 1 once the work has stopped.
        const message = "Lost connection to CSI driver, exiting";
        log.error(message, { address: config.csiAddress, reason });
        const path = terminationLogPath();
        const notWritten = writeTerminationMessage(path, message);
        if (notWritten !== undefined) log.v(4).info("No termination message written", { path, reason: notWritten });
      });
    },
  });
  const csi = new CsiClient(transport);
  let info: DriverInfo;
  try {
    info = await startDriver({
      client: csi,
      socketPath: config.csiAddress,
      log,
      probeTimeoutMs: config.timeoutMs,
      // A driver that in-tree volumes migrate to gets the `migrated` label, as upstream's WithMigration.
      onDriverName: (name) => metrics?.csiOperations.setDriver(name, inTreePluginForDriver(name) !== undefined),
      signal,
    });
  } catch (e: unknown) {
    if (signal.aborted) return undefined;
    throw new StartupFailure("Failed to start with the CSI driver", { csiAddress: config.csiAddress }, { cause: e });
  }
  endpoint.readiness.satisfy("driver-probed");
  return { csi, info, checkDriverNow };
}

/** What the attacher learns from the driver before it starts working. */
export interface DriverInfo {
  readonly name: string;
  readonly capabilities: DriverCapabilities;
}

/**
 * Waiting for the CSI driver's socket and for Probe to say ready at start-up:
 * upstream retries every second, for ever.
 */
export const driverStartupRetry: BackoffPolicy = { initialMs: 1_000, factor: 1, maxMs: 1_000 };

export interface DriverStartupOptions {
  readonly client: CsiClient;
  readonly socketPath: string;
  readonly log: Logger;
  /** --timeout: deadline of each Probe. */
  readonly probeTimeoutMs: number;
  /** Deadline of the short identity calls (upstream's csiTimeout). Default 1 s. */
  readonly shortCallTimeoutMs?: number;
  /** Pauses between connection attempts and between probes. Default driverStartupRetry (every second, as upstream). */
  readonly retry?: BackoffPolicy;
  /**
   * Told the driver's name as soon as GetPluginInfo answers, before the
   * capability calls: the operation metrics label those with it, as
   * upstream's SetDriverName comes between the two. Default: nothing.
   */
  readonly onDriverName?: (name: string) => void;
  readonly signal: AbortSignal;
}

/** resolveDriverStartupOptions fills the defaults of every optional field. */
function resolveDriverStartupOptions(options: DriverStartupOptions): Required<DriverStartupOptions> {
  return { ...options, shortCallTimeoutMs: options.shortCallTimeoutMs ?? 1000, retry: options.retry ?? driverStartupRetry, onDriverName: options.onDriverName ?? (() => {}) };
}

/**
 * startDriver waits for the socket, probes until the driver is ready, then
 * asks its name and capabilities, in upstream's order. Probe failures other
 * than DeadlineExceeded, and any failure of the identity calls, are fatal:
 * a driver that answers wrongly at start will not answer rightly later.
 */
export async function startDriver(options: DriverStartupOptions): Promise<DriverInfo> {
  const { client, log, signal, shortCallTimeoutMs, retry, onDriverName } = resolveDriverStartupOptions(options);

  await waitForSocket(options.socketPath, new Backoff(retry), log, signal);
  const probes = new Backoff(retry);

  for (;;) {
    log.info("Probing CSI driver for readiness");
    try {
      if (await client.probe(options.probeTimeoutMs)) break;
      log.warn("CSI driver is not ready");
    } catch (e: unknown) {
      if (!(e instanceof CsiCallError) || e.code !== Code.DeadlineExceeded) {
        throw new DriverStartupError(`CSI driver probe failed: ${errorMessage(e)}`, { cause: e });
      }
      log.warn("CSI driver probe timed out");
    }
    await abortableSleep(probes.next(), signal);
  }

  let name: string;
  try {
    name = await client.driverName(shortCallTimeoutMs);
  } catch (e: unknown) {
    throw new DriverStartupError(`failed to get the CSI driver name: ${errorMessage(e)}`, { cause: e });
  }
  if (name === "") throw new DriverStartupError("the CSI driver returned an empty name from GetPluginInfo");
  log.info("CSI driver name", { driver: name });
  onDriverName(name);

  let capabilities: DriverCapabilities;
  try {
    capabilities = await client.capabilities(shortCallTimeoutMs);
  } catch (e: unknown) {
    throw new DriverStartupError(`failed to get the CSI driver's capabilities: ${errorMessage(e)}`, { cause: e });
  }
  return { name, capabilities };
}

/**
 * waitForSocket dials the socket until it accepts a connection: in a pod the
 * driver container may start after us, and upstream waits for it forever,
 * saying so every ten seconds.
 */
async function waitForSocket(path: string, backoff: Backoff, log: Logger, signal: AbortSignal): Promise<void> {
  let lastReport = 0;
  for (;;) {
    if (signal.aborted) throw new DriverStartupError("start-up aborted");
    const failure = await connectFailure(path);
    if (failure === undefined) return;
    const sinceReport = realClock.now() - lastReport;
    // A clock stepped back makes it due as well, rather than silent for the step's length.
    if (sinceReport >= 10_000 || sinceReport < 0) {
      // The reason tells a driver that has not started yet (no such file)
      // from a wrong --csi-address (a file that is not a socket).
      log.info("Still connecting", { address: `unix://${path}`, reason: failure });
      lastReport = realClock.now();
    }
    await abortableSleep(backoff.next(), signal);
  }
}

/** connectFailure dials the socket once: undefined when it connects, else why not. */
function connectFailure(path: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = new UnixSocket(path);
    socket.on("connect", () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.on("error", (error: unknown) => resolve(notASocket(path) ? `${path} exists but is not a socket` : errorMessage(error)));
  });
}

function notASocket(path: string): boolean {
  try {
    return !statSync(path).isSocket();
  } catch (e: unknown) {
    // Gone, or unreadable: the connect error says which.
    void e;
    return false;
  }
}
