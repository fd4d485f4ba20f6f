/**
 * The order the end-to-end test files start in. They run a few at a time,
 * each in its own bun test process, and a free slot takes the next file
 * (scripts/test.ts). Two files spend about three minutes each mostly
 * waiting on purpose (a Prometheus alert's 60 s threshold, a minute of a
 * kubelet keeping pods Ready), and a handful take about a minute: started
 * last, any of them would keep the run going alone after the others ended.
 * So files start longest first, by their expected seconds.
 */

/**
 * Expected wall seconds of each e2e file that takes longer than a typical
 * one: from its first line to the next file's in a run of four bun test
 * processes side by side (2026-11-28, warm, on 2 cores), so ground
 * start-up and hooks count, and so does the others' load. A file's tests'
 * own times say much less: image-build.test.ts reports 13-28 s of tests
 * and takes ~60 s. Only the order matters.
 */
export const slowFileSeconds: Readonly<Record<string, number>> = {
  "test/e2e/monitoring-prometheus.test.ts": 180,
  "test/e2e/real-node.test.ts": 171,
  "test/e2e/image-build.test.ts": 61,
  "test/e2e/watch-list.test.ts": 50,
  "test/e2e/leader-election.test.ts": 35,
  "test/e2e/reconciler-leaves-in-flight-work.test.ts": 34,
  "test/e2e/startup.test.ts": 33,
  "test/e2e/runc-deployment.test.ts": 32,
  "test/e2e/attach-detach-controller.test.ts": 29,
  "test/e2e/reconciler.test.ts": 28,
  "test/e2e/cluster.test.ts": 26,
  "test/e2e/lifecycle.test.ts": 26,
  "test/e2e/tight-memory-limit.test.ts": 23,
  "test/e2e/http-endpoint.test.ts": 21,
  "test/e2e/kube-auth.test.ts": 20,
  "test/e2e/attach-rules.test.ts": 19,
  "test/e2e/api-server-restart.test.ts": 18,
  "test/e2e/fairness.test.ts": 17,
  "test/e2e/arm64-emulated.test.ts": 17,
  "test/e2e/bad-startup-input.test.ts": 16,
  "test/e2e/many-volumes.test.ts": 15,
  "test/e2e/restart-costs.test.ts": 14,
  "test/e2e/driver-chart-args.test.ts": 14,
  "test/e2e/driver-faults.test.ts": 14,
  "test/e2e/distroless-rootfs.test.ts": 12,
  "test/e2e/leader-recovery.test.ts": 12,
  "test/e2e/pv-finalizers.test.ts": 12,
};

/** What a file not in slowFileSeconds is expected to take, ground and hooks included (the others' mean in that run). */
export const typicalFileSeconds = 8;

/**
 * longestFirst orders `files` by expected seconds, longest first (ties:
 * by name), so that the files a free slot takes last are the short ones.
 */
export function longestFirst(files: readonly string[], secondsOf: (file: string) => number = expectedSeconds): string[] {
  return [...files].sort((a, b) => secondsOf(b) - secondsOf(a) || a.localeCompare(b));
}

/** expectedSeconds is a file's entry in slowFileSeconds, or typicalFileSeconds. */
export function expectedSeconds(file: string): number {
  return slowFileSeconds[file] ?? typicalFileSeconds;
}
