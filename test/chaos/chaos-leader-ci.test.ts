import { describe, expect, it } from "bun:test";
import { runChaos } from "./run-chaos";

/**
 * The chaos suite with two attacher replicas under leader election: the
 * attacher faults kill the Lease holder mid-publish and mid-unpublish, the
 * standby takes over (the killed replica restarts only after the Lease
 * expired, as the kubelet's back-off would have it), the driver restart
 * takes both down. Same invariants as chaos-ci.test.ts.
 *
 * It fails about one run in four, on a real hazard that is not the
 * attacher's doing: kube-apiserver's DELETE can hard-delete a VA whose
 * finalizer was added concurrently (kubernetes/kubernetes#77988; the fix
 * #129768 was reverted, #133995 is open). The evidence.json of such a run
 * shows the VA with our finalizer and `attached: true`, then a DELETE with
 * no deletionTimestamp in between, and its volume left published. A new
 * leader working off its backlog while the churn deletes makes the race
 * likely. Upstream's attacher is exposed the same way; a defence would be
 * to unpublish when a VA vanishes still carrying our finalizer.
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
