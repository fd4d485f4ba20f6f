// `bun run soak`: the long run that shows the attacher does not leak (not
// in CI). For SOAK_MINUTES (default 60) VAs churn steadily, every watch is
// ended after SOAK_WATCH_SECONDS (default 30) as an API server's watch
// timeout ends it (through a loopback proxy), --resync re-delivers every
// object each 30 s, and the driver restarts every SOAK_DRIVER_RESTART_MINUTES
// (default 10), which by design restarts the attacher too. Every 10 s it
// samples the attacher's RSS, open fds, threads and CPU from /proc and prints
// a line; at the end, per attacher process, the trend after warm-up (Bun
// offers no count of live timers, so a timer leak is looked for as CPU per
// minute that climbs while the churn stays steady). SOAK_HEAP_PROBE=1 runs
// the attacher from source under the heap probe instead, which each minute
// reports the live heap, objects and timers after a full GC.
// Build the binary first (`bun run build`).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Churn } from "../chaos/churn";
import { AttacherSupervisor } from "../chaos/attacher-supervisor";
import { AdminClient } from "../ground/admin-client";
import { startTestCluster } from "../ground/test-cluster";
import { launchFakeCsiDriver } from "../ground/fake-csi-driver/launch";
import { CorruptingProxy } from "../e2e/support/corrupting-proxy";
import { csiNode, paths } from "../ground/objects";
import { SoakHeapProbe } from "./soak-heap-probe";
import { slopePerMinute } from "./slope-per-minute";

const minutes = Number(process.env["SOAK_MINUTES"] ?? "60");
const watchSeconds = Number(process.env["SOAK_WATCH_SECONDS"] ?? "30");
const driverRestartMinutes = Number(process.env["SOAK_DRIVER_RESTART_MINUTES"] ?? "10");
/** Milliseconds between churn steps (each creates or deletes a VA); a growth that scales with it is per VA, one that does not is per unit of time. */
const paceMs = Number(process.env["SOAK_PACE_MS"] ?? "250");
const sampleMs = 10_000;
/** Samples of each attacher process before this are warm-up, left out of its trend. */
const warmUpMs = 60_000;
const driverName = "soak.fake.csi.test";
const nodes = ["soak-node-0", "soak-node-1"];

interface Sample {
  readonly atMs: number;
  readonly incarnation: number;
  readonly rssKiB: number;
  /** RSS split: anonymous memory (heap, malloc) is where a leak shows; file-backed pages are the binary's code and data paged in, shared and reclaimable. */
  readonly rssAnonKiB: number;
  readonly rssFileKiB: number;
  readonly fds: number;
  readonly threads: number;
  /** utime + stime so far, in ms: a leak of timers or intervals shows as CPU per minute that climbs at a steady churn. */
  readonly cpuMs: number;
}

function procStatus(pid: number, field: string): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((entry) => entry.startsWith(`${field}:`));
  return Number.parseInt(line?.split(/\s+/)[1] ?? "NaN", 10);
}

const clockTicksPerSecond = Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim()) || 100;

/** cpuMsOf reads utime + stime from /proc/<pid>/stat (fields 14 and 15; the command name may hold spaces, so count after its ")"). */
function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicksPerSecond;
}

/** cpuMsPerMinute is the CPU used per minute between the first and the last of `samples`. */
function cpuMsPerMinute(samples: readonly Sample[]): number {
  const first = samples[0];
  const last = samples.at(-1);
  if (first === undefined || last === undefined || last.atMs === first.atMs) return Number.NaN;
  return ((last.cpuMs - first.cpuMs) * 60_000) / (last.atMs - first.atMs);
}

const dir = mkdtempSync(join(tmpdir(), "soak-"));
mkdirSync(join(dir, "driver-state"));
await using cluster = await startTestCluster();
const admin = new AdminClient(cluster);
await using proxy = new CorruptingProxy(cluster, watchSeconds * 1000);
for (const node of nodes) await admin.create(paths.csiNodes, csiNode(node, [{ name: driverName, nodeID: `${node}-id` }]));
await using driver = await launchFakeCsiDriver({ directory: dir, config: { name: driverName, stateDir: join(dir, "driver-state") } });
const heapProbe = process.env["SOAK_HEAP_PROBE"] === "1" ? new SoakHeapProbe(dir) : undefined;
const attachers = new AttacherSupervisor({
  ...(heapProbe ? { binary: heapProbe.binary } : {}),
  kubeconfig: proxy.kubeconfig(dir),
  csiAddress: driver.csiSocket,
  logDir: dir,
  args: ["--resync=30s", "--timeout=5s", "-v=2"],
});
await attachers.start();
console.log(`soak: ${minutes} min, a churn step every ${paceMs} ms, watches end every ${watchSeconds} s, driver restarts every ${driverRestartMinutes} min; logs in ${dir}`);

const started = performance.now();
const over = () => performance.now() - started > minutes * 60_000;
const churn = new Churn({ admin, driverName, nodes, total: 0, maxLive: 60, paceMs, random: Math.random });
const churning = churn.run(over);
const samples: Sample[] = [];
let lastRestart = performance.now();
const incarnationStart = new Map<number, number>();
try {
  while (!over()) {
    const incarnation = attachers.incarnations;
    const pid = attachers.current.process.pid;
    if (!incarnationStart.has(incarnation)) incarnationStart.set(incarnation, performance.now());
    try {
      const sample: Sample = {
        atMs: Math.round(performance.now() - (incarnationStart.get(incarnation) ?? started)),
        incarnation,
        rssKiB: procStatus(pid, "VmRSS"),
        rssAnonKiB: procStatus(pid, "RssAnon"),
        rssFileKiB: procStatus(pid, "RssFile"),
        fds: readdirSync(`/proc/${pid}/fd`).length,
        threads: procStatus(pid, "Threads"),
        cpuMs: cpuMsOf(pid),
      };
      samples.push(sample);
      if (heapProbe && samples.length % 6 === 0) heapProbe.probe(pid);
      console.log(
        `soak: t=${Math.round((performance.now() - started) / 1000)}s attacher-${incarnation} rss=${(sample.rssKiB / 1024).toFixed(1)}MiB (anon ${(sample.rssAnonKiB / 1024).toFixed(1)}, file ${(sample.rssFileKiB / 1024).toFixed(1)}) fds=${sample.fds} threads=${sample.threads} vas: created=${churn.created} live=${churn.live}`,
      );
    } catch (e: unknown) {
      // The attacher was between incarnations (driver restart): the next sample finds the new one.
      console.log(`soak: no sample (${String(e)})`);
    }
    if (performance.now() - lastRestart > driverRestartMinutes * 60_000) {
      const before = attachers.incarnations;
      await driver.restart();
      await attachers.waitForNext(before);
      lastRestart = performance.now();
      console.log(`soak: driver restarted; attacher-${attachers.incarnations} running`);
    }
    await Bun.sleep(sampleMs);
  }
} finally {
  await churning;
  await attachers.stop();
}

console.log("soak: trend per attacher process (samples after the first minute):");
for (const incarnation of new Set(samples.map((sample) => sample.incarnation))) {
  const own = samples.filter((sample) => sample.incarnation === incarnation && sample.atMs >= warmUpMs);
  if (own.length < 2) {
    console.log(`soak:   attacher-${incarnation}: too short to trend (${own.length} samples after warm-up)`);
    continue;
  }
  const rss = own.map((sample) => sample.rssKiB / 1024);
  const half = Math.floor(own.length / 2);
  console.log(
    `soak:   attacher-${incarnation}: ${own.length} samples, rss ${Math.min(...rss).toFixed(1)}-${Math.max(...rss).toFixed(1)} MiB, ` +
      `slope ${(slopePerMinute(own, (sample) => sample.rssKiB) / 1024).toFixed(3)} MiB/min ` +
      `(anon ${(slopePerMinute(own, (sample) => sample.rssAnonKiB) / 1024).toFixed(3)}, file ${(slopePerMinute(own, (sample) => sample.rssFileKiB) / 1024).toFixed(3)}); ` +
      // A level that is still being reached shows as a slope in the first half only; a leak keeps its slope in the second.
      `anon slope ${(slopePerMinute(own.slice(0, half + 1), (sample) => sample.rssAnonKiB) / 1024).toFixed(3)} MiB/min in the first half, ` +
      `${(slopePerMinute(own.slice(half), (sample) => sample.rssAnonKiB) / 1024).toFixed(3)} in the second; ` +
      `fds ${Math.min(...own.map((sample) => sample.fds))}-${Math.max(...own.map((sample) => sample.fds))}, ` +
      `threads ${Math.min(...own.map((sample) => sample.threads))}-${Math.max(...own.map((sample) => sample.threads))}; ` +
      `cpu ${cpuMsPerMinute(own.slice(0, half + 1)).toFixed(0)} ms/min in the first half, ${cpuMsPerMinute(own.slice(half)).toFixed(0)} in the second`,
  );
}
console.log(
  `soak: churn created ${churn.created} VAs, deleted ${churn.deletedVas}; ${proxy.watchesEnded} watches ended at their lifetime; ` +
    `${attachers.incarnations} attacher processes; exits: ${attachers.exits.join("; ") || "none"}`,
);
if (heapProbe) {
  console.log("soak: heap probes per attacher process (after the first minute):");
  for (const line of heapProbe.report(warmUpMs)) console.log(`soak:   ${line}`);
}
