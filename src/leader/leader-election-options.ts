import { LeaderElectionConfigError } from "./errors";
import { jitterFactor } from "./lease-decisions";

/**
 * LeaderElectionOptions are the timings and naming of one leader election,
 * the knobs of csi-lib-utils' leaderelection. Durations in milliseconds.
 */
export interface LeaderElectionOptions {
  /** Lease name, already sanitized (see leaderElectionLeaseName). */
  readonly leaseName: string;
  /** Lease namespace, already resolved (see resolveLeaseNamespace). */
  readonly namespace: string;
  /** Holder identity, already sanitized; upstream uses the hostname. */
  readonly identity: string;
  /** --leader-election-lease-duration: how long a standby waits on a silent leader. Default 15 s. */
  readonly leaseDurationMs?: number;
  /** --leader-election-renew-deadline: how long the leader keeps retrying a renew before giving up. Default 10 s. */
  readonly renewDeadlineMs?: number;
  /** --leader-election-retry-period: the wait between attempts. Default 5 s. */
  readonly retryPeriodMs?: number;
  /**
   * Release the lease after the work has stopped on SIGTERM/SIGINT, so a
   * standby takes over at once (upstream's ReleaseLeaderElectionOnExit
   * feature gate, client-go's ReleaseOnCancel). Default false, as upstream.
   */
  readonly releaseOnCancel?: boolean;
  /**
   * How far past the lease duration a leader's last renew may lie before
   * /healthz/leader-election fails; csi-lib-utils' DefaultHealthCheckTimeout. Default 20 s.
   */
  readonly healthCheckToleranceMs?: number;
}

/**
 * LeaseTimingProblem is which of client-go's NewLeaderElector rules a set of
 * timings breaks: the lease must outlast the renew deadline, and the renew
 * deadline must outlast one jittered retry, or two replicas could both think
 * they lead.
 */
export type LeaseTimingProblem = "lease-not-longer-than-renew-deadline" | "renew-deadline-not-longer-than-jittered-retry";

/** leaseTimingProblem checks those two rules; the flag parser and the elector word the answer each for their reader. */
export function leaseTimingProblem(leaseDurationMs: number, renewDeadlineMs: number, retryPeriodMs: number): LeaseTimingProblem | undefined {
  if (leaseDurationMs <= renewDeadlineMs) return "lease-not-longer-than-renew-deadline";
  if (renewDeadlineMs <= jitterFactor * retryPeriodMs) return "renew-deadline-not-longer-than-jittered-retry";
  return undefined;
}

/** resolveLeaderElectionOptions fills the defaults and rejects timings under which leadership could overlap. */
export function resolveLeaderElectionOptions(options: LeaderElectionOptions): Required<LeaderElectionOptions> {
  const resolved: Required<LeaderElectionOptions> = {
    leaseName: options.leaseName,
    namespace: options.namespace,
    identity: options.identity,
    leaseDurationMs: options.leaseDurationMs ?? 15_000,
    renewDeadlineMs: options.renewDeadlineMs ?? 10_000,
    retryPeriodMs: options.retryPeriodMs ?? 5_000,
    releaseOnCancel: options.releaseOnCancel ?? false,
    healthCheckToleranceMs: options.healthCheckToleranceMs ?? 20_000,
  };
  if (resolved.identity === "") throw new LeaderElectionConfigError("leader election identity is empty (the hostname is empty)");
  if (resolved.leaseDurationMs < 1000) {
    // The Lease stores whole seconds; anything shorter would be written as 0.
    throw new LeaderElectionConfigError(`--leader-election-lease-duration=${resolved.leaseDurationMs}ms must be at least 1s`);
  }
  if (resolved.retryPeriodMs <= 0) throw new LeaderElectionConfigError("--leader-election-retry-period must be greater than zero");
  const problem = leaseTimingProblem(resolved.leaseDurationMs, resolved.renewDeadlineMs, resolved.retryPeriodMs);
  if (problem === "lease-not-longer-than-renew-deadline") {
    throw new LeaderElectionConfigError(
      `--leader-election-lease-duration (${resolved.leaseDurationMs}ms) must be greater than --leader-election-renew-deadline (${resolved.renewDeadlineMs}ms)`,
    );
  }
  if (problem === "renew-deadline-not-longer-than-jittered-retry") {
    throw new LeaderElectionConfigError(
      `--leader-election-renew-deadline (${resolved.renewDeadlineMs}ms) must be greater than ${jitterFactor} x --leader-election-retry-period (${resolved.retryPeriodMs}ms)`,
    );
  }
  return resolved;
}
