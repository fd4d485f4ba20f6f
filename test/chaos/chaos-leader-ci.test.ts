import { describe, expect, it } from "bun:test";
import { rmSync } from "node:fs";
import { driverKinds } from "./invariants";
import { runChaos } from "./run-chaos";

/**
 * The chaos suite with two attacher replicas under leader election: the
 * attacher faults kill the Lease holder mid-publish and mid-unpublish, the
 * standby takes over (the killed replica restarts only after the Lease
 * expired, as the kubelet's back-off would have it), the driver restart
 * takes both down. Same invariants as chaos-ci.test.ts.
 *
 * Its runs before 2026-11-22 failed about one in four on kube-apiserver's
 * own race (kubernetes/kubernetes#77988: a DELETE hard-deletes a VA whose
 * finalizer was added concurrently; the fix #133995 is still open): a VA
 * with our finalizer, then DELETE with no deletionTimestamp between, its
 * volume left published. The attacher now unpublishes such a VA from its
 * last state (src/controller/deleted-with-finalizer.ts), and the judge
 * holds those VAs to that: unpublished afterwards, and never published
 * again.
 *
 * It runs once per driver kind: a blind driver (no
 * LIST_VOLUMES_PUBLISHED_NODES, so a restart or leader change recovers
 * nothing) and a listing one (the reconciler runs every 10 s); scripts/test.ts
 * runs each kind in a bun test process of its own, by this title.
 */

describe.each(driverKinds)("chaos with leader election and a %s driver", (driverKind) => {
  it("keeps every promise with two leader-election replicas whose leader is the one killed, alone and together with other faults, while 100 VAs churn", async () => {
    const report = await runChaos({ vas: 100, cycles: 1, seed: 11, replicas: 2, driverKind });
    expect(report.faults.filter((fault) => fault.outcome.includes("(leader) killed")).length).toBeGreaterThanOrEqual(2);
    expect(report.invariants.map((result) => ({ name: result.name, violations: result.violations }))).toEqual(
      report.invariants.map((result) => ({ name: result.name, violations: [] })),
    );
    expect(report.invariants.filter((result) => result.checked === 0).map((result) => result.name)).toEqual([]);
    // The calls were counted, and no stray unpublish went beyond a deleted VA's detach and the one each swept VA may cost.
    expect({ published: report.calls.publishes > 0, straysBeyondAllowed: report.calls.beyond }).toEqual({ published: true, straysBeyondAllowed: 0 });
    // Every promise kept: the logs are not needed (a failed run keeps them, named in its report).
    rmSync(report.dir, { recursive: true, force: true });
  });
});
