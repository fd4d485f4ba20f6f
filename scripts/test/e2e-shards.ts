/**
 * How the end-to-end test files are split over the shards that run at
 * once. Two files spend over two minutes each mostly waiting on purpose (a
 * Prometheus alert's 60 s threshold, a minute of a kubelet keeping pods
 * Ready); dealt out by name, they could share a shard while another shard
 * ran dry. So each file gets its expected seconds, and the files are dealt
 * longest first to the shard with the least so far.
 */

/**
 * Expected seconds of each e2e file that takes longer than a typical one:
 * its tests' time in a warm CI run's report (2026-11-28, four shards) plus
 * the ~9.5 s each file spent starting and stopping its ground there (the
 * kubelet node's ground costs real-node.test.ts ~40 s more). Only the order
 * and the sums matter: the shards end together only when the sums are close
 * to the truth, and the run waits for the last one.
 */
export const slowFileSeconds: Readonly<Record<string, number>> = {
  "test/e2e/real-node.test.ts": 235,
  "test/e2e/monitoring-prometheus.test.ts": 175,
  "test/e2e/leader-election.test.ts": 40,
  "test/e2e/lifecycle.test.ts": 30,
  "test/e2e/reconciler-leaves-in-flight-work.test.ts": 30,
  "test/e2e/startup.test.ts": 28,
  "test/e2e/cluster.test.ts": 24,
  "test/e2e/reconciler.test.ts": 23,
  "test/e2e/image-build.test.ts": 22,
  "test/e2e/http-endpoint.test.ts": 22,
  "test/e2e/api-server-restart.test.ts": 20,
  "test/e2e/kube-auth.test.ts": 20,
  "test/e2e/tight-memory-limit.test.ts": 20,
  "test/e2e/arm64-emulated.test.ts": 18,
  "test/e2e/attach-detach-controller.test.ts": 18,
  "test/e2e/many-volumes.test.ts": 18,
  "test/e2e/watch-list.test.ts": 17,
  "test/e2e/attach-rules.test.ts": 17,
  "test/e2e/start-script.test.ts": 16,
  "test/e2e/restart-costs.test.ts": 16,
  "test/e2e/driver-faults.test.ts": 16,
  "test/e2e/bad-startup-input.test.ts": 15,
  "test/e2e/detach-rules.test.ts": 14,
  "test/e2e/fairness.test.ts": 13,
  "test/e2e/grpc-transport-conformance.test.ts": 13,
  "test/e2e/driver-chart-args.test.ts": 13,
};

/** What a file not in slowFileSeconds is expected to take: a few seconds of tests plus its ground's start and stop. */
export const typicalFileSeconds = 11;

/**
 * planShards deals `files` to `shards` groups, longest expected first, each
 * to the group with the fewest expected seconds so far (ties: the lower
 * index), so that the groups end close together. Within a group the files
 * keep their name order. Empty groups are dropped.
 */
export function planShards(files: readonly string[], shards: number, secondsOf: (file: string) => number = expectedSeconds): string[][] {
  const groups = Array.from({ length: Math.max(1, shards) }, () => ({ files: [] as string[], seconds: 0 }));
  const longestFirst = [...files].sort((a, b) => secondsOf(b) - secondsOf(a) || a.localeCompare(b));
  for (const file of longestFirst) {
    const lightest = groups.reduce((best, group) => (group.seconds < best.seconds ? group : best));
    lightest.files.push(file);
    lightest.seconds += secondsOf(file);
  }
  return groups.filter((group) => group.files.length > 0).map((group) => group.files.sort());
}

/** expectedSeconds is a file's entry in slowFileSeconds, or typicalFileSeconds. */
export function expectedSeconds(file: string): number {
  return slowFileSeconds[file] ?? typicalFileSeconds;
}
