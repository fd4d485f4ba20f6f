import type { Config } from "../cli/config";
import { inTreePluginForDriver } from "../controller/migration/in-tree-plugins";
import { CsiClient } from "../csi/csi-client";
import { stopSignalSpreadMs, type DriverLoss } from "../csi/driver-loss";
import { startDriver, type DriverInfo } from "../csi/driver-startup";
import { createGrpcLogInterceptor, grpcLogLevel } from "../csi/grpc-log-interceptor";
import { createOperationMetricsInterceptor } from "../csi/operation-metrics-interceptor";
import { createDriverConnection } from "../csi/driver-connection";
import type { Logger } from "../log/logger";
import { terminationLogPath, writeTerminationMessage } from "../util/termination-message";
import { StartupFailure } from "./errors";
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
