/**
 * LeaderElectionStatus is all the HTTP endpoint needs from leader election:
 * the value of `leader_election_master_status{name}` and the verdict of
 * `/healthz/leader-election`. Both are read when scraped or probed; leader
 * election never pushes into the metrics code.
 */
export interface LeaderElectionStatus {
  /** The `name` label of leader_election_master_status: the Lease's name. */
  readonly name: string;
  /** True while this replica holds the lease (gauge value 1), else false (0). */
  isLeader(): boolean;
  /**
   * client-go's HealthzAdaptor check: undefined when healthy, an Error when
   * we are leader but have not renewed for longer than the lease duration
   * plus 20 s (the loop is stuck; the kubelet should restart us). A standby
   * is always healthy. Serve the error as HTTP 500 `internal server error: <message>`.
   */
  check(): Error | undefined;
}
