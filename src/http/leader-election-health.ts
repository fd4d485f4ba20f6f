import type { LeaderElectionStatus } from "../leader/leader-election-status";

/** LeaderElectionHealthCheck is what the `/healthz/leader-election` handler reads of leader election (client-go's HealthzAdaptor check). */
export type LeaderElectionHealthCheck = Pick<LeaderElectionStatus, "check">;

/**
 * LeaderElectionHealthAdaptor lets the HTTP endpoint serve the check before
 * the elector exists (it needs the driver's name for its Lease): healthy
 * until {@link set} is called, as client-go's HealthzAdaptor is before
 * `SetLeaderElection`.
 */
export class LeaderElectionHealthAdaptor implements LeaderElectionHealthCheck {
  private elector: LeaderElectionHealthCheck | undefined;

  /** Hands the check over to the elector. */
  set(elector: LeaderElectionHealthCheck): void {
    this.elector = elector;
  }

  check(): Error | undefined {
    return this.elector?.check();
  }
}
