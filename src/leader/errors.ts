/** LeaderElectionConfigError is a set of timings client-go would refuse (its NewLeaderElector checks). */
export class LeaderElectionConfigError extends Error {
  override name = "LeaderElectionConfigError";
}
