/**
 * LeaderElectionHealthCheck is what the leader elector offers the
 * `/healthz/leader-election` handler, with the semantics of client-go's
 * HealthzAdaptor: undefined (healthy) while we stand by; an Error only when
 * we are the leader and the lease has gone unrenewed for longer than the
 * lease duration plus a tolerance (csi-lib-utils uses 20 s), which means the
 * renew loop is stuck and the process should be restarted.
 */
export interface LeaderElectionHealthCheck {
  check(): Error | undefined;
}

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
