import type { Config } from "../cli/config";
import { inTreePluginForDriver } from "../controller/migration/in-tree-plugins";
import { CsiClient } from "../csi/csi-client";
import { meaningOfDriverLoss, stopSignalSpreadMs } from "../csi/driver-loss";
import { startDriver, type DriverInfo } from "../csi/driver-startup";
import { createGrpcLogInterceptor, grpcLogLevel } from "../csi/grpc-log-interceptor";
import { createOperationMetricsInterceptor } from "../csi/operation-metrics-interceptor";
import { createDriverTransport } from "../csi/transport";
import type { Logger } from "../log/logger";
import { terminationLogPath, writeTerminationMessage } from "../util/termination-message";
import { StartupFailure } from "./errors";
import type { HttpEndpoint } from "./http-endpoint";

export interface CsiDriverOptions {
  /** --csi-address, --timeout (each Probe's deadline), and what decides whether gRPC payloads are logged. */
  readonly config: Pick<Config, "csiAddress" | "timeoutMs" | "verbosity" | "vmodule" | "maxGrpcLogLength">;
  /** The process logger: start-up's probes, the lost driver, gRPC payloads at -v=5. */
  readonly log: Logger;
  /** Told that the driver answered Probe; its metrics, if kept, time every CSI call. */
  readonly endpoint: Pick<HttpEndpoint, "readiness" | "metrics">;
  /** Aborted by a shutdown signal: start-up stops waiting for the driver. */
  readonly signal: AbortSignal;
  /** Ends the process with a code: main.ts's, the one place that exits. */
  readonly exit: (code: number) => never;
}

/** CsiDriver is the driver the attacher works with: its client, and what it said at start. */
export interface CsiDriver {
  readonly csi: CsiClient;
  readonly info: DriverInfo;
}

/**
 * connectToDriver connects to the CSI driver's socket, waits until it
 * answers Probe, and learns its name and capabilities. Returns undefined
 * when a shutdown signal stopped the wait; throws StartupFailure when the
 * driver answered wrongly. A connection lost later ends the process.
 */
export async function connectToDriver(options: CsiDriverOptions): Promise<CsiDriver | undefined> {
  const { config, log, endpoint, signal } = options;
  const { metrics } = endpoint;
  const transport = createDriverTransport({
    socketPath: config.csiAddress,
    // Logging outermost and metrics inside it, as csi-lib-utils chains them, so
    // a call's recorded time leaves out the logging of its payloads.
    interceptors: [
      // Left out altogether unless -v=5, or a --vmodule rule at 5 or more, can print its lines.
      ...(config.verbosity >= grpcLogLevel || config.vmodule.some((rule) => rule.verbosity >= grpcLogLevel) ? [createGrpcLogInterceptor({ log, maxLogLength: config.maxGrpcLogLength })] : []),
      ...(metrics === undefined ? [] : [createOperationMetricsInterceptor({ observer: metrics.csiOperations })]),
    ],
    onConnectionLost: (reason) => {
      if (!signal.aborted) log.v(4).info("CSI driver connection lost, waiting for a stop signal that may come with it", { spread: `${stopSignalSpreadMs}ms` });
      void meaningOfDriverLoss({ stopping: signal }).then((meaning) => {
        if (meaning === "shutting-down") {
          // The pod is being deleted and its driver stopped too (often first): the drain goes on.
          log.info("CSI driver went away while shutting down", { address: config.csiAddress, reason });
          return;
        }
        // Upstream exits so that Kubernetes restarts the pod and it reconnects cleanly.
        const message = "Lost connection to CSI driver, exiting";
        log.error(message, { address: config.csiAddress, reason });
        const path = terminationLogPath();
        const notWritten = writeTerminationMessage(path, message);
        if (notWritten !== undefined) log.v(4).info("No termination message written", { path, reason: notWritten });
        options.exit(1);
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
  return { csi, info };
}
