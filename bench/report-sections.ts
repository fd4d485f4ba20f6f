/**
 * The report's sections, one function each, in the order the bench runs
 * them; run.ts runs them in turn. Each runs only when its scenario is
 * wanted and the mode has one, and adds its cells through runScenario.
 */
import { readFileSync } from "node:fs";
import type { AttacherBinary, AttacherKind } from "./lib/attacher-under-test";
import type { BenchContext } from "./lib/bench-context";
import { BenchMonitoring } from "./lib/bench-monitoring";
import { createForeignPvs, removeOwnPvs, type BenchGround, type DriverKind } from "./lib/bench-ground";
import type { FloorBinaries } from "./lib/floor-build";
import { floorApiStackFromEnv, floorApiStacks } from "./floor/floor-api-stacks";
import { note, progress } from "./lib/progress";
import type { LimitRun, MetricSpec, MonitoringPictures, RunResult } from "./lib/results";
import { ScaleObjects } from "./lib/scale-objects";
import type { Mode } from "./modes";
import { coldStartMetrics, runColdStart, type ColdStartParams } from "./scenarios/cold-start";
import { containerLimitMetrics, runContainerLimit, type ContainerLimitParams } from "./scenarios/container-limit";
import { fairnessMetrics, runFairness } from "./scenarios/fairness";
import { floorMetrics, runFloorScenario } from "./scenarios/floor";
import { latencyMetrics, runLatency } from "./scenarios/latency";
import { runLimit } from "./scenarios/limit";
import { idleMetrics, memoryMetrics, runIdle, runMemory } from "./scenarios/memory";
import { createBoundClaims, createControllerManagedNodes, podsMetrics, runPods } from "./scenarios/pods";
import { restoreDriver, runScale, scaleMetrics, type ScaleParams } from "./scenarios/scale";
import { runThroughput, throughputMetrics, withGcMetrics } from "./scenarios/throughput";

/** How one section's runs go: which attachers, a bare-client limit run beside them, the floor client too, how many rounds. */
export interface ScenarioOptions {
  readonly attachers?: boolean;
  readonly limit?: (round: number) => Promise<LimitRun>;
  readonly withFloor?: boolean;
  readonly rounds?: number;
}

/** RunScenario runs every round of one section and adds it to the report; it resolves false when a run failed. */
export type RunScenario = (
  id: string,
  title: string,
  params: Record<string, number | string>,
  metrics: readonly MetricSpec[],
  notes: readonly string[],
  run: (binary: AttacherBinary, round: number) => Promise<RunResult>,
  options?: ScenarioOptions,
) => Promise<boolean>;

/** BenchRun is what every section is run with: the ground, the mode, the binaries and the way to add a section to the report. */
export interface BenchRun {
  readonly ctx: BenchContext;
  readonly ground: BenchGround;
  readonly mode: Mode;
  readonly wanted: (id: string) => boolean;
  readonly runScenario: RunScenario;
  readonly driverKind: DriverKind;
  readonly driverLatencyMs: number;
  /** Notes for the cells at upstream's default limits, when ours ran unthrottled there. */
  readonly qpsNote: readonly string[];
  readonly binaries: Readonly<Record<AttacherKind, AttacherBinary>>;
  readonly floor: FloorBinaries | undefined;
  readonly scaleParams: ScaleParams | undefined;
  /** The container-limit cells: the mode's, or --container-limit-n's. */
  readonly containerLimitParams: readonly ContainerLimitParams[] | undefined;
  /** The cold-start cell: the mode's, or the mode's with --cold-start-waiting's N. */
  readonly coldStartParams: ColdStartParams | undefined;
  /** Which attachers run (--kinds). */
  readonly kinds: readonly ("ours" | "go")[];
  /** The Prometheus server binary, for the dashboard's panels. */
  readonly prometheus: string;
  /** Where the panels' SVG files go, relative to the report's folder. */
  readonly panelsDir: string;
  /** Writes the report of what has finished so far. */
  readonly writeReport: () => void;
}

async function idleSection(run: BenchRun): Promise<void> {
  const { ctx, mode } = run;
  if (!run.wanted("idle")) return;
  await run.runScenario("idle", "Idle memory", { ...mode.idle }, idleMetrics, [], (b, r) => runIdle(ctx, b, r, mode.idle));
}

/**
 * Right after idle, on the same ground: the floor client caches nothing,
 * so its idle is only comparable with ours before the memory scenario's
 * foreign PVs (which stay) and the own PVs of throughput exist.
 */
/** floorApiNote says how this run's floor programs reach kube-apiserver (run.ts's --floor-api). */
function floorApiNote(): string {
  return `the floor reaches kube-apiserver over ${floorApiStacks[floorApiStackFromEnv()]}`;
}

async function floorSection(run: BenchRun): Promise<void> {
  const { ctx, floor } = run;
  const cells = run.mode.floor;
  if (!run.wanted("floor") || cells === undefined || floor === undefined) return;
  const loadOnly = floor.loadOnly;
  for (const [index, params] of cells.entries()) {
    // The first cell keeps the id "floor", so earlier reports compare with it.
    await run.runScenario(
      index === 0 ? "floor" : `floor-w${params.workers}`,
      `Bun's floor: idle, then ${params.volumes} VAs, ${params.workers} workers, qps ${params.qps}/burst ${params.burst}`,
      { ...params },
      withGcMetrics(floorMetrics),
      [
        "floor = bench/floor/bare-attacher.ts (the same API writes and CSI calls per VA, a GET of the PV and CSINode per VA instead of caches, no queue); load-only = bench/floor/load-only.ts",
        floorApiNote(),
      ],
      (b, r) => runFloorScenario(ctx, b, r, params, loadOnly),
      { withFloor: true },
    );
  }
}

/**
 * One cell per throughput setting, with the bare client's limit beside it
 * where asked; where the mode draws the dashboard's panels, a real
 * Prometheus scrapes both attachers through it (the bare limit client
 * exports nothing).
 */
async function throughputSection(run: BenchRun): Promise<SectionExtras | undefined> {
  const { wanted } = run;
  if (!wanted("throughput") && !wanted("limit")) return undefined;
  const scraper = wanted("throughput") && run.mode.dashboardPanels === true ? await BenchMonitoring.start(run.prometheus, run.kinds) : undefined;
  try {
    await runThroughputCells(run, scraper);
    if (scraper !== undefined) {
      progress("throughput: querying the dashboard's panels", true);
      const monitoring = await scraper.pictures("throughput", run.panelsDir);
      if (monitoring.empty.length > 0) note(`dashboard panels with no data over the throughput scenario: ${monitoring.empty.join(", ")}`);
      return { monitoring };
    }
    return undefined;
  } finally {
    await scraper?.[Symbol.asyncDispose]();
  }
}

/** runThroughputCells runs the throughput matrix; with a scraper, each attacher exports its metrics where that Prometheus scrapes its kind. */
async function runThroughputCells(run: BenchRun, scraper: BenchMonitoring | undefined): Promise<void> {
  const { ctx, wanted, driverLatencyMs } = run;
  for (const params of run.mode.throughput) {
    const limited = params.qps <= 5;
    // The bare client is not throttled: next to a cell at upstream's
    // default limits it would measure the throttle, not the machine.
    const withLimit = wanted("limit") && !limited;
    if (!wanted("throughput") && !withLimit) continue;
    await run.runScenario(
      `throughput-w${params.workers}-q${params.qps}`,
      `Throughput, ${params.volumes} VAs, ${params.workers} workers, qps ${params.qps}/burst ${params.burst}`,
      { ...params, driverLatencyMs, driver: run.driverKind },
      withGcMetrics(throughputMetrics),
      [...(limited ? run.qpsNote : []), ...(scraper === undefined ? [] : ["both attachers ran with --http-endpoint, scraped by Prometheus every second for the dashboard's panels in this report"])],
      (b, r) => runThroughput(ctx, b, r, params, scraper?.endpointArgs(b.kind)),
      { attachers: wanted("throughput"), ...(withLimit ? { limit: (r: number) => runLimit(ctx, r, params) } : {}) },
    );
  }
}

async function coldStartSection(run: BenchRun): Promise<void> {
  const { ctx } = run;
  const params = run.coldStartParams;
  if (!run.wanted("cold-start") || params === undefined) return;
  // The floor too: what a compiled Bun client pays from exec to the same attaches, so start-up's ours/floor is known as the cycle's is.
  await run.runScenario(
    "cold-start",
    `Cold start, ${params.waiting} VAs waiting`,
    { ...params },
    coldStartMetrics,
    ["the floor's ready is its first line, logged before its one watch (it lists nothing); its start-up timeline is not read"],
    (b, r) => runColdStart(ctx, b, r, params),
    { withFloor: true },
  );
}

async function memorySection(run: BenchRun): Promise<void> {
  const { ctx } = run;
  const params = run.mode.memory;
  if (!run.wanted("memory") || params === undefined) return;
  progress(`creating ${params.foreignPvs} foreign PVs`, true);
  await createForeignPvs(run.ground.admin, 0, params.foreignPvs);
  await run.runScenario("memory", `Memory, ${params.foreignPvs} foreign PVs + ${params.ownVas} own VAs`, { ...params }, memoryMetrics, [], (b, r) => runMemory(ctx, b, r, params));
}

async function latencySection(run: BenchRun): Promise<void> {
  const { ctx, driverLatencyMs } = run;
  const params = run.mode.latency;
  if (!run.wanted("latency") || params === undefined) return;
  await run.runScenario("latency", `Latency at ${params.perSecond} VA/s for ${params.seconds} s`, { ...params, driverLatencyMs }, latencyMetrics, [], (b, r) => runLatency(ctx, b, r, params));
}

async function fairnessSection(run: BenchRun): Promise<void> {
  const { ctx, driverLatencyMs } = run;
  const params = run.mode.fairness;
  if (!run.wanted("fairness") || params === undefined) return;
  await run.runScenario(
    "fairness",
    `Fairness: new attach behind ${params.backlog} detaches, driver ${params.slowMs} ms`,
    { ...params },
    fairnessMetrics,
    [],
    (b, r) => runFairness(ctx, b, r, params, driverLatencyMs),
  );
}

/**
 * One cell per N: the smallest memory limit that holds it, each run in a
 * memory cgroup of its own. A cluster of N volumes holds N PVs of the
 * driver and nothing else the attachers cache: so the section runs before
 * the memory scenario's 10,000 foreign PVs exist (with them, Go's cache of
 * full PVs alone moved its 30-VA limit from 64 to 96-104 MiB), and each
 * cell starts without the own PVs earlier scenarios left.
 */
async function containerLimitSection(run: BenchRun): Promise<void> {
  const { ctx } = run;
  const cells = run.containerLimitParams;
  if (!run.wanted("container-limit") || cells === undefined) return;
  for (const params of cells) {
    await removeOwnPvs(ctx.ground, ctx.ownPvs);
    await run.runScenario(
      `container-limit-n${params.volumes}`,
      `Container limit, ${params.volumes} VAs, ${params.workers} workers, qps ${params.qps}/burst ${params.burst}`,
      { ...params, load: loadAverage() },
      containerLimitMetrics,
      [
        `each run in its own memory cgroup, page cache dropped before each exec; a limit holds when exec-to-last-VA-gone ends within max(2x, +2 s) the unconstrained time, with no OOM kill and the process alive; the walk moves in ${params.stepMiB} MiB steps`,
        floorApiNote(),
      ],
      // Our attacher finishes a failed cycle of any kind: it retries, and uses the same finalizer.
      (b, r) => runContainerLimit(ctx, b, r, params, run.binaries.ours),
      { withFloor: true },
    );
  }
}

/**
 * Last but scale: the controller's start-up takes over every VA it finds,
 * so it runs only once no other scenario makes VAs of its own.
 */
async function podsSection(run: BenchRun): Promise<void> {
  const { ctx, ground, driverLatencyMs } = run;
  const params = run.mode.pods;
  if (!run.wanted("pods") || params === undefined) return;
  progress(`starting kube-controller-manager, binding ${params.pods} claims`, true);
  await createControllerManagedNodes(ground.admin);
  const controllerManager = await ground.cluster.startControllerManager({ kubeApiQps: params.controllerQps, kubeApiBurst: params.controllerBurst });
  try {
    await createBoundClaims(ground.admin, params.pods);
    await run.runScenario("pods", `Pods through kube-controller-manager, ${params.pods} Pods`, { ...params, driverLatencyMs }, podsMetrics, [], (b, r) => runPods(ctx, b, r, params, controllerManager));
  } finally {
    await controllerManager.stop();
  }
}

/**
 * Scale runs last: its own PVs and VAs (up to 60,000) stay on the ground,
 * and every scenario after it would be measured next to them. The report
 * is written after each N, so a run stopped during a large N keeps the
 * smaller ones; it stops after the first N that fails.
 */
async function scaleSection(run: BenchRun): Promise<void> {
  const { ctx, ground, driverLatencyMs } = run;
  const params = run.scaleParams;
  if (!run.wanted("scale") || params === undefined) return;
  const objects = new ScaleObjects(ground, params.nodes);
  try {
    for (const n of params.sizes) {
      progress(`scale: making ${n} own PVs and VAs on ${params.nodes} nodes, ${params.foreignPvs} foreign PVs`, true);
      const made = await objects.grow(n + 3, n, params.foreignPvs);
      const rate = made.seconds > 0 ? Math.round(made.created / made.seconds) : 0;
      note(`scale n=${n}: created ${made.created} objects in ${made.seconds.toFixed(1)} s (${rate}/s)`);
      const ok = await run.runScenario(
        `scale-n${n}`,
        `Scale, ${n} own VAs on ${params.nodes} nodes + ${params.foreignPvs} foreign PVs`,
        { n, foreignPvs: params.foreignPvs, nodes: params.nodes, maxEntries: params.maxEntries, reconcileSeconds: params.reconcileSeconds, workers: params.workers, qps: params.qps, burst: params.burst, driverLatencyMs, createdObjects: made.created, createSeconds: round1(made.seconds) },
        scaleMetrics,
        [`objects created once for this N by the bench (${rate} objects/s, 64 requests in flight) and reset between attachers`],
        (b, r) => runScale(ctx, objects, b, r, n, params, driverLatencyMs),
        { rounds: 1 },
      );
      run.writeReport();
      if (!ok) {
        note(`scale: stopping after n=${n} failed`);
        break;
      }
    }
  } finally {
    if (ground.fake !== undefined) await restoreDriver(ground.fake, driverLatencyMs);
  }
}

/** SectionExtras is what a section adds to the report beside its cells: the throughput section's dashboard panels. */
export interface SectionExtras {
  readonly monitoring?: MonitoringPictures;
}

/** reportSections are the report's sections in the order they run. */
export const reportSections: readonly ((run: BenchRun) => Promise<SectionExtras | undefined | void>)[] = [
  idleSection,
  floorSection,
  containerLimitSection,
  throughputSection,
  coldStartSection,
  memorySection,
  latencySection,
  fairnessSection,
  podsSection,
  scaleSection,
];

/** loadAverage is /proc/loadavg's 1, 5 and 15 minute figures, stamped on the container-limit cells: the machine is shared. */
function loadAverage(): string {
  return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}
