// `bun run chaos`: the long chaos run. CHAOS_VAS (default 1000) VAs churned
// through CHAOS_CYCLES (default 3) cycles of every fault, with CHAOS_REPLICAS
// (default 1; 2 or more run leader election, and the leader is the one
// killed) attacher replicas, against a CHAOS_DRIVER (default "blind") driver:
// "blind" cannot list where volumes are published, "listing" can (and the
// attacher's reconciler runs); prints what it did, the driver calls it cost,
// and each invariant, and exits 1 if one broke. Build the binary first
// (`bun run build`); the test ground comes from test/ground.
import { driverKinds, type DriverKind } from "./invariants";
import { runChaos } from "./run-chaos";

const vas = Number(process.env["CHAOS_VAS"] ?? "1000");
const cycles = Number(process.env["CHAOS_CYCLES"] ?? "3");
const replicas = Number(process.env["CHAOS_REPLICAS"] ?? "1");
const seed = Number(process.env["CHAOS_SEED"] ?? String(Date.now() % 100_000));
const driverKind = process.env["CHAOS_DRIVER"] ?? "blind";
if (!Number.isInteger(vas) || vas < 1 || !Number.isInteger(cycles) || cycles < 1) {
  console.error("CHAOS_VAS and CHAOS_CYCLES must be positive integers");
  process.exit(2);
}
if (!isDriverKind(driverKind)) {
  console.error(`CHAOS_DRIVER must be "blind" or "listing", not ${JSON.stringify(driverKind)}`);
  process.exit(2);
}
console.log(`chaos: seed ${seed} (CHAOS_SEED=${seed} repeats the churn's choices)`);
const report = await runChaos({ vas, cycles, seed, replicas, driverKind, settleTimeoutMs: 300_000 });
console.log(
  JSON.stringify(
    {
      vas: report.churn,
      faults: report.faults.length,
      attacherIncarnations: report.attacherIncarnations,
      relists: report.relists,
      driverCalls: report.driverCalls,
      driverKind: report.driverKind,
      // The whole list is in report.json beside the logs.
      calls: { ...report.calls, strays: report.calls.strays.slice(0, 20) },
      sweptByApiserver: report.sweptByApiserver,
      leftPublishedUnwatched: report.leftPublishedUnwatched,
      historyChanges: report.historyChanges,
      settleMs: report.settleMs,
      totalMs: report.totalMs,
      invariants: report.invariants.map((result) => ({ name: result.name, checked: result.checked, violations: result.violations.length })),
    },
    null,
    2,
  ),
);
const broken = report.invariants.filter((result) => result.violations.length > 0);
console.log(broken.length === 0 ? "chaos: every invariant held" : `chaos: ${broken.length} invariant(s) broken; logs in ${report.dir}`);
process.exit(broken.length === 0 ? 0 : 1);

function isDriverKind(kind: string): kind is DriverKind {
  return (driverKinds as readonly string[]).includes(kind);
}
