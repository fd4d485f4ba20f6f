import { describe, expect, it } from "bun:test";
import { runChaos } from "./run-chaos";

/**
 * The chaos suite with two attacher replicas under leader election: the
 * attacher faults kill the Lease holder mid-publish and mid-unpublish, the
 * standby takes over (the killed replica restarts only after the Lease
 * expired, as the kubelet's back-off would have it), the driver restart
 * takes both down. Same invariants as chaos-ci.test.ts.
 */
describe("chaos with leader election", () => {
  it("keeps every promise with two leader-election replicas whose leader is the one killed, while 100 VAs churn", async () => {
    const report = await runChaos({ vas: 100, cycles: 1, seed: 11, replicas: 2 });
    expect(report.faults.filter((fault) => fault.outcome.includes("(leader) killed")).length).toBeGreaterThanOrEqual(2);
    expect(report.invariants.map((result) => ({ name: result.name, violations: result.violations }))).toEqual(
      report.invariants.map((result) => ({ name: result.name, violations: [] })),
    );
    expect(report.invariants.filter((result) => result.checked === 0).map((result) => result.name)).toEqual([]);
  });
});
