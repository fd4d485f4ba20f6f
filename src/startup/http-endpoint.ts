import type { Config } from "../cli/config";
import { workQueueNames } from "../controller/work-queue-names";
import { LeaderElectionHealthAdaptor } from "../http/leader-election-health";
import { Readiness } from "../http/readiness";
import type { Logger } from "../log/logger";
import type { MetricRegistry } from "../metrics/metric-registry";
import { StartupFailure } from "./errors";

export interface HttpEndpointOptions {
  /** --http-endpoint ("" for none), --metrics-path, and --leader-election, which changes what ready means. */
  readonly config: Pick<Config, "httpEndpoint" | "metricsPath" | "leaderElection">;
  /** The process logger: "ServeMux listening", and the server's render failures. */
  readonly log: Logger;
}

/** HttpEndpoint is what the later start-up steps report to, whether or not anything listens. */
export interface HttpEndpoint {
  /** What /readyz still waits for. */
  readonly readiness: Readiness;
  /** /healthz/leader-election: the elector, once built, is handed to it. */
  readonly leaderElectionHealth: LeaderElectionHealthAdaptor;
  /** The metrics /metrics serves; undefined without --http-endpoint, where no metric is kept. */
  readonly metrics: MetricRegistry | undefined;
}

/**
 * startHttpEndpoint is up from the start, so /healthz answers and /readyz
 * says what start-up still waits for. Without --http-endpoint nothing
 * listens and no metric is kept. Throws StartupFailure when the address
 * cannot be listened on.
 */
export async function startHttpEndpoint(options: HttpEndpointOptions): Promise<HttpEndpoint> {
  const { config, log } = options;
  // With leader election a standby never lists (only the leader runs the
  // controller), and a Deployment's rollout waits for every replica to be
  // ready: there, ready means able to take over, the driver answered Probe.
  const readiness = new Readiness(config.leaderElection ? ["driver-probed"] : ["driver-probed", "caches-synced"]);
  const leaderElectionHealth = new LeaderElectionHealthAdaptor();
  if (config.httpEndpoint === "") return { readiness, leaderElectionHealth, metrics: undefined };
  // prom-client and the server load only when something listens: the
  // build's --splitting puts them in a chunk of their own. Only modules
  // that nothing else imports are worth importing lazily; the doctor's own
  // modules, beyond the kube and CSI clients it shares, weigh next to
  // nothing at start, so loading them lazily would buy nothing.
  const [{ MetricRegistry }, { startHttpServer }] = await Promise.all([import("../metrics/metric-registry"), import("../http/http-server")]);
  const metrics = new MetricRegistry({ workQueueNames: Object.values(workQueueNames) });
  try {
    // Closed by the process exit, like Go's ListenAndServe goroutine.
    startHttpServer({
      address: config.httpEndpoint,
      metricsPath: config.metricsPath,
      metrics,
      readiness,
      log,
      ...(config.leaderElection ? { leaderElection: leaderElectionHealth } : {}),
    });
  } catch (e: unknown) {
    throw new StartupFailure("Failed to start HTTP server at specified address and metrics path", { address: config.httpEndpoint, metricsPath: config.metricsPath }, { cause: e });
  }
  return { readiness, leaderElectionHealth, metrics };
}
