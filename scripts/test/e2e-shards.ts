/**
 * How the end-to-end test files are split over the shards that run at
 * once. Two files spend over two minutes each mostly waiting on purpose (a
 * Prometheus alert's 60 s threshold, a minute of a kubelet keeping pods
 * Ready); dealt out by name, they could share a shard while another shard
 * ran dry. So each file gets its expected seconds, and the files are dealt
 * longest first to the shard with the least so far.
 */

/**
 * Expected seconds of the e2e files that take much longer than the rest,
 * from the CI runs' reports (test time plus their ground's start). Only the
 * order matters: a file not listed counts as `typicalFileSeconds`.
 */
export const slowFileSeconds: Readonly<Record<string, number>> = {
  "test/e2e/monitoring-prometheus.test.ts": 190,
  "test/e2e/real-node.test.ts": 205,
  "test/e2e/leader-election.test.ts": 35,
  "test/e2e/lifecycle.test.ts": 28,
  "test/e2e/reconciler-leaves-in-flight-work.test.ts": 25,
  "test/e2e/startup.test.ts": 20,
  "test/e2e/cluster.test.ts": 18,
  "test/e2e/reconciler.test.ts": 17,
  "test/e2e/image-build.test.ts": 15,
  "test/e2e/kube-auth.test.ts": 15,
  "test/e2e/watch-list.test.ts": 30,
  "test/e2e/tight-memory-limit.test.ts": 20,
  "test/e2e/attach-detach-controller.test.ts": 18,
  "test/e2e/arm64-emulated.test.ts": 14,
  "test/e2e/http-endpoint.test.ts": 14,
  "test/e2e/api-server-restart.test.ts": 14,
  "test/e2e/bad-startup-input.test.ts": 14,
  "test/e2e/driver-faults.test.ts": 12,
};

/** What a file not in slowFileSeconds is expected to take: a few seconds of tests plus its cluster's start. */
export const typicalFileSeconds = 8;

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
