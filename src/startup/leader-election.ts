import type { Config } from "../cli/config";
import { createAttacherLeaderElector } from "../leader/create-leader-elector";
import type { LeaderElectionOutcome, LeaderElector } from "../leader/leader-elector";
import type { ApiServer } from "./api-server";
import { StartupFailure } from "./errors";
import type { HttpEndpoint } from "./http-endpoint";
import { runAttacher, type RunAttacherOptions } from "./run-attacher";

export interface RunWhileLeadingOptions extends RunAttacherOptions {
  /** The --leader-election-* flags and the ReleaseLeaderElectionOnExit feature gate. */
  readonly config: RunAttacherOptions["config"] &
    Pick<Config, "leaderElectionNamespace" | "leaderElectionLeaseDurationMs" | "leaderElectionRenewDeadlineMs" | "leaderElectionRetryPeriodMs" | "leaderElectionLabels" | "featureGates">;
  /** Leader election builds its own, unthrottled client on this connection. */
  readonly apiServer: Pick<ApiServer, "client" | "connection" | "userAgent">;
  /** /healthz/leader-election and the leader metric watch the elector. */
  readonly endpoint: HttpEndpoint;
}

/**
 * runWhileLeading takes part in leader election for the driver's Lease and
 * runs the attacher while this replica leads. It resolves "lost" when the
 * lease was lost (another replica may already be attaching) and "stopped"
 * after a shutdown; throws StartupFailure when the elector cannot be built.
 */
export async function runWhileLeading(options: RunWhileLeadingOptions): Promise<LeaderElectionOutcome> {
  const { config, log, apiServer, endpoint } = options;
  let elector: LeaderElector;
  try {
    elector = createAttacherLeaderElector({
      connection: apiServer.connection,
      userAgent: apiServer.userAgent,
      driverName: options.driver.info.name,
      namespace: config.leaderElectionNamespace,
      leaseDurationMs: config.leaderElectionLeaseDurationMs,
      renewDeadlineMs: config.leaderElectionRenewDeadlineMs,
      retryPeriodMs: config.leaderElectionRetryPeriodMs,
      labels: config.leaderElectionLabels,
      releaseOnExit: config.featureGates.ReleaseLeaderElectionOnExit,
      log,
    });
  } catch (e: unknown) {
    throw new StartupFailure("Failed to initialize leader election", {}, { cause: e });
  }
  endpoint.leaderElectionHealth.set(elector);
  endpoint.metrics?.watchLeaderElection(elector);
  return elector.run(options.signal, (leading) => runAttacher({ ...options, signal: leading }));
}
