import { describe, expect, it } from "bun:test";
import { LeaderElectionConfigError } from "../../../src/leader/errors";
import { resolveLeaderElectionOptions } from "../../../src/leader/leader-election-options";

const base = { leaseName: "external-attacher-leader-x", namespace: "default", identity: "replica-a" };

describe("leader election options", () => {
  it("defaults to upstream's 15 s / 10 s / 5 s, no release on exit, 20 s health tolerance", () => {
    expect(resolveLeaderElectionOptions(base)).toEqual({
      ...base,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 5_000,
      releaseOnCancel: false,
      healthCheckToleranceMs: 20_000,
    });
  });

  it("rejects a lease duration not longer than the renew deadline, naming both flags", () => {
    expect(() => resolveLeaderElectionOptions({ ...base, leaseDurationMs: 10_000, renewDeadlineMs: 10_000 })).toThrow(
      "--leader-election-lease-duration (10000ms) must be greater than --leader-election-renew-deadline (10000ms)",
    );
  });

  it("rejects a renew deadline not longer than 1.2 retry periods", () => {
    expect(() => resolveLeaderElectionOptions({ ...base, renewDeadlineMs: 6_000, retryPeriodMs: 5_000 })).toThrow(LeaderElectionConfigError);
  });

  it("rejects an empty identity", () => {
    expect(() => resolveLeaderElectionOptions({ ...base, identity: "" })).toThrow("identity is empty");
  });
});
