/**
 * The benchmark: our attacher against upstream's Go csi-attacher v4.13.0,
 * in turn (A B A B) on one kube-apiserver + etcd and one CSI driver, same
 * flags, several rounds. Writes <out>/<date>.json, .html and .md.
 *
 *   bun run bench                       full run, report under bench/results/
 *   bun run bench:quick                 about 3 minutes, report under bench/results/scratch/
 *   bun run bench:smoke                 tiny N: proves the harness works (CI); asserts no speed
 *   bun run bench/run.ts --help         every option
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ensureComponents } from "../test/ground/components";
import { honouredFlags } from "./lib/attacher-flags";
import type { AttacherBinary, AttacherKind } from "./lib/attacher-under-test";
import { BenchContext } from "./lib/bench-context";
import { buildGoAttacher } from "./lib/go-attacher-build";
import { startBenchGround } from "./lib/bench-ground";
import { commandOutput, hostFacts } from "./lib/machine-facts";
import { note, progress } from "./lib/progress";
import { summarizeLimit } from "./lib/limit-ratios";
import { summarizeWithFloor } from "./lib/floor-ratios";
import type { BenchResults, LimitRun, MonitoringPictures, RunResult, ScenarioResult } from "./lib/results";
import { VaWatch } from "./lib/va-watch";
import { reportSections, type BenchRun, type RunScenario } from "./report-sections";
import { coldStartCell, containerLimitCell, defaultScale, modes, type ModeName } from "./modes";
import type { ColdStartParams } from "./scenarios/cold-start";
import type { ContainerLimitParams } from "./scenarios/container-limit";
import { renderHtml } from "./report/render-html";
import { formatNumber, renderMarkdown } from "./report/render-markdown";
import { buildFloor, type FloorBinaries } from "./lib/floor-build";
import { defaultFloorApiStack, floorApiStacks, isFloorApiStack } from "./floor/floor-api-stacks";
import type { ScaleParams } from "./scenarios/scale";

const repoRoot = resolve(import.meta.dir, "..");
const usage = `usage: bun run bench/run.ts [options]
  --mode full|quick|smoke   size of the run (default full)
  --go-attacher PATH        upstream csi-attacher binary (default: built by bench/build-go-attacher.sh)
  --ours PATH               our binary (default: build dist/csi-attacher from this tree)
  --rounds N                rounds per scenario (default: the mode's)
  --driver fake|mock        CSI driver: the fault driver (default) or Kubernetes' mock driver
                            (mock: idle, throughput and limit only)
  --driver-latency-ms N     publish/unpublish latency of the fault driver (default 0)
  --only a,b                only these scenarios: idle,throughput,limit,cold-start,memory,latency,fairness,
                            container-limit,floor,scale,pods
                            (limit: the bare client next to each throughput cell at high limits;
                             container-limit and floor need root and a memory cgroup;
                             scale: N VAs on 100 nodes, ours then Go per N; full mode only: a smoke-sized run still takes ~35 s,
                             two kube-apiserver restarts among it; --scale-n runs it in any mode;
                             pods: kube-controller-manager's attach/detach controller drives the attacher)
  --scale-n A,B             the N of the scale scenario, smallest first (default: the mode's); it stops after the first N that fails
  --container-limit-n A,B   the N of the container-limit scenario, at the full mode's shape (10 workers, 8 MiB steps),
                            in any mode (default: the mode's; full: 30,300,1000)
  --container-limit-step N  the walk's step in MiB, with --container-limit-n (default 8): a smaller one tells how far
                            apart two attachers are within one 8 MiB step, at the price of more cycles
  --cold-start-waiting N    VAs waiting at exec in the cold-start scenario (default: the mode's; full: 100), e.g. 300
                            for issue 25's CPU of N VAs attached and detached, start-up included
  --scale-foreign N         foreign PVs next to the scale scenario's own (default: the mode's)
  --kinds ours,go           which attachers to run (default both; one alone gives no ratios); "floor" alone runs
                            only Bun's floor client, in the floor, container-limit and cold-start scenarios
  --gc-log                  run the Bun programs with JSC's GC log, without eden collections or Bun's GC timer
                            (BUN_JSC_logGC=1 BUN_JSC_useGenerationalGC=0 BUN_GC_TIMER_DISABLE=1): the throughput cycles
                            report JS heap bytes allocated per VA cycle (a lower bound; compare within one run);
                            their memory and CPU figures are then not comparable with other runs
  --floor-api ${Object.keys(floorApiStacks).join("|")}  how the floor programs reach kube-apiserver (default ${defaultFloorApiStack}):
${Object.entries(floorApiStacks).map(([name, words]) => `                            ${name}: ${words}`).join("\n")}
  --keep-logs               keep the attachers' logs (default: deleted unless a run failed)
  --out DIR                 where reports go (default bench/results, quick/smoke: bench/results/scratch)
  --label NAME              appended to the report's file names (<date>-NAME.json), e.g. container-limit
  -v N                      attacher verbosity for both (default 2; below 2 upstream's ready line is not logged)`;

const { values: opts } = parseArgs({
  options: {
    mode: { type: "string", default: "full" },
    "go-attacher": { type: "string" },
    ours: { type: "string" },
    rounds: { type: "string" },
    driver: { type: "string", default: "fake" },
    "driver-latency-ms": { type: "string", default: "0" },
    only: { type: "string" },
    kinds: { type: "string", default: "ours,go" },
    "floor-api": { type: "string", default: defaultFloorApiStack },
    "gc-log": { type: "boolean", default: false },
    "scale-n": { type: "string" },
    "container-limit-n": { type: "string" },
    "container-limit-step": { type: "string" },
    "cold-start-waiting": { type: "string" },
    "keep-logs": { type: "boolean", default: false },
    "scale-foreign": { type: "string" },
    out: { type: "string" },
    label: { type: "string" },
    v: { type: "string", short: "v", default: "2" },
    help: { type: "boolean", default: false },
  },
  strict: true,
});
if (opts.help) {
  console.log(usage);
  process.exit(0);
}
if (!Object.hasOwn(modes, opts.mode)) {
  console.error(`--mode must be full, quick or smoke, not ${JSON.stringify(opts.mode)}\n${usage}`);
  process.exit(2);
}
const modeName = opts.mode as ModeName;
const mode = modes[modeName];
const roundsOfMode = opts.rounds === undefined ? mode.rounds : positiveInt("--rounds", opts.rounds);
const driverLatencyMs = nonNegativeInt("--driver-latency-ms", opts["driver-latency-ms"]);
const verbosity = nonNegativeInt("-v", opts.v);
const driverKind = opts.driver;
if (driverKind !== "fake" && driverKind !== "mock") {
  console.error(`--driver must be fake or mock, not ${JSON.stringify(driverKind)}\n${usage}`);
  process.exit(2);
}
/** The driver, as narrowed above, for code that runs later (the report). */
const groundDriver: "fake" | "mock" = driverKind;
/** What Kubernetes' mock driver can run: it has no latency to script, and only the throughput scenario is set up for its volumes. */
const mockScenarios = ["idle", "throughput", "limit"];
const allScenarios = ["idle", "throughput", "limit", "cold-start", "memory", "latency", "fairness", "container-limit", "floor", "scale", "pods"];
const onlyNames = opts.only?.split(",");
const unknownScenario = onlyNames?.find((id) => !allScenarios.includes(id));
if (unknownScenario !== undefined) {
  console.error(`--only: no scenario ${JSON.stringify(unknownScenario)}\n${usage}`);
  process.exit(2);
}
if (driverKind === "mock") {
  const refused = onlyNames?.filter((id) => !mockScenarios.includes(id)) ?? [];
  if (refused.length > 0) {
    console.error(`--driver mock runs only ${mockScenarios.join(", ")}; drop ${refused.join(", ")} from --only: those scenarios need the fault driver (its scripted latency, or volumes it publishes without CreateVolume)`);
    process.exit(2);
  }
  if (opts["driver-latency-ms"] !== "0") {
    console.error("--driver-latency-ms needs the fault driver; Kubernetes' mock driver answers at once");
    process.exit(2);
  }
}
const only = new Set(onlyNames ?? (driverKind === "mock" ? mockScenarios : allScenarios));
const outDir = resolve(opts.out ?? join(repoRoot, "bench/results", modeName === "full" ? "" : "scratch"));
const wanted = (id: string) => only.has(id);
const kinds = opts.kinds.split(",").filter((k): k is "ours" | "go" => k === "ours" || k === "go");
// --kinds floor: the floor's two stacks A/B against each other (--floor-api) without an attacher's runs.
if (kinds.length === 0 && opts.kinds !== "floor") throw new Error(`--kinds must name ours and/or go, or floor alone, not ${JSON.stringify(opts.kinds)}`);
const floorApi = opts["floor-api"];
if (!isFloorApiStack(floorApi)) throw new Error(`--floor-api must be one of ${Object.keys(floorApiStacks).join(", ")}, not ${JSON.stringify(floorApi)}`);
// The floor programs read it at start (bench/floor/floor-connections.ts); the attachers ignore it.
if (floorApi !== defaultFloorApiStack) process.env["FLOOR_API_STACK"] = floorApi;

function positiveInt(flag: string, text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} must be a whole number >= 1, not ${JSON.stringify(text)}`);
  return n;
}
function nonNegativeInt(flag: string, text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${flag} must be a whole number >= 0, not ${JSON.stringify(text)}`);
  return n;
}

const scaleParams: ScaleParams | undefined =
  mode.scale === undefined && opts["scale-n"] === undefined
    ? undefined
    : {
        // --scale-n in a mode without a scale scenario: the full mode's shape (modes.full.scale is defaultScale).
        ...(mode.scale ?? defaultScale),
        ...(opts["scale-n"] === undefined ? {} : { sizes: opts["scale-n"].split(",").map((n) => positiveInt("--scale-n", n)) }),
        ...(opts["scale-foreign"] === undefined ? {} : { foreignPvs: nonNegativeInt("--scale-foreign", opts["scale-foreign"]) }),
      };

if (opts["container-limit-step"] !== undefined && opts["container-limit-n"] === undefined) throw new Error("--container-limit-step needs --container-limit-n: the modes' own cells keep their steps");
const containerLimitStepMiB = opts["container-limit-step"] === undefined ? undefined : positiveInt("--container-limit-step", opts["container-limit-step"]);
const containerLimitParams: readonly ContainerLimitParams[] | undefined =
  opts["container-limit-n"] === undefined
    ? mode.containerLimit
    : opts["container-limit-n"].split(",").map((n) => containerLimitCell(positiveInt("--container-limit-n", n), containerLimitStepMiB));

const coldStartParams: ColdStartParams | undefined =
  opts["cold-start-waiting"] === undefined ? mode.coldStart : coldStartCell(positiveInt("--cold-start-waiting", opts["cold-start-waiting"]));

const wallStart = performance.now();
const startedAt = new Date().toISOString();
/** Every report of this run goes to <out>/<start time>.{json,html,md}. */
const reportStem = join(outDir, `${startedAt.slice(0, 16).replace(":", "")}${opts.label === undefined ? "" : `-${opts.label}`}`);
note(`mode ${modeName}, ${roundsOfMode} round(s), ${driverKind} driver, driver latency ${driverLatencyMs} ms, floor API stack ${floorApi}${opts["gc-log"] ? ", JSC GC log on" : ""}`);
if (driverKind === "mock" && onlyNames === undefined) note("--driver mock: running idle, throughput and limit only (the other scenarios need the fault driver)");

// Binaries: the Go build is cached by version; ours is built from this tree
// unless given, so the report is about the code next to it.
const components = await ensureComponents();
const goPath = opts["go-attacher"] ?? (kinds.includes("go") ? buildGoAttacher() : "");
const oursPath = opts.ours ?? buildOurs();
// The floor programs run only in the scenarios that compare against them (floor, container-limit, cold-start).
const floor: FloorBinaries | undefined = wanted("floor") || wanted("container-limit") || wanted("cold-start") ? buildFloor() : undefined;
const binaries: Record<AttacherKind, AttacherBinary> = {
  ours: { kind: "ours", path: resolve(oursPath) },
  // Without Go (--kinds ours) there is nothing to copy: resolve("") would name the working directory.
  go: { kind: "go", path: goPath === "" ? "" : privateCopy(resolve(goPath)) },
  floor: { kind: "floor", path: floor?.bareAttacher ?? "" },
};
for (const binary of kinds.map((k) => binaries[k])) {
  if (!existsSync(binary.path)) throw new Error(`${binary.kind} attacher binary ${binary.path} does not exist`);
}

const ground = await startBenchGround(driverKind, driverLatencyMs, components.mockCsiDriver);
// Set once the ground runs, so only the attachers started from here on read them (ours and the floor; Go ignores them).
// Full collections only, none from Bun's timer: fewer, longer stretches between them for the count (bench/lib/jsc-gc-log.ts).
if (opts["gc-log"]) Object.assign(process.env, { BUN_JSC_logGC: "1", BUN_JSC_useGenerationalGC: "0", BUN_GC_TIMER_DISABLE: "1" });
const watch = await VaWatch.start(ground.cluster);
const ctx = new BenchContext(ground, watch, verbosity);
const scenarios: ScenarioResult[] = [];
let failures = 0;
// Asked of the binary under test, which --ours may have built from another commit.
const oursFlags = honouredFlags(commandOutput([binaries.ours.path, "--help"]));
const oursHonoursQps = oursFlags.has("kube-api-qps") && oursFlags.has("kube-api-burst");
const qpsNote = oursHonoursQps ? [] : ["ours does not honour --kube-api-qps/--kube-api-burst (its --help does not list them, or says they have no effect): it ran unthrottled while Go ran at the given limits"];

/**
 * runScenario runs every round, A then B (then the bare client, when
 * `limit` is given), and keeps what finished even if a run fails.
 */
const runScenario: RunScenario = async (id, title, params, metrics, notes, run, options = {}) => {
  const runKinds: AttacherKind[] = options.attachers === false ? [] : [...kinds, ...(options.withFloor === true ? (["floor"] as const) : [])];
  const runs: RunResult[] = [];
  const limitRuns: LimitRun[] = [];
  const failed: string[] = [];
  const rounds = options.rounds ?? roundsOfMode;
  for (let round = 1; round <= rounds; round++) {
    for (const kind of runKinds) {
      progress(`${title}: round ${round}/${rounds}, ${kind}`, true);
      try {
        const result = await run(binaries[kind], round);
        runs.push(result);
        note(`${title} r${round} ${kind}: ${Object.entries(result.metrics).map(([k, v]) => `${k}=${v}`).join(" ")}`);
      } catch (e: unknown) {
        failures++;
        const message = e instanceof Error ? e.message : String(e);
        failed.push(`round ${round} ${kind} failed: ${message.split("\n")[0]}`);
        note(`${title} r${round} ${kind} FAILED: ${message}`);
      }
    }
    if (options.limit !== undefined) {
      progress(`${title}: round ${round}/${rounds}, bare-client limit`, true);
      try {
        const result = await options.limit(round);
        limitRuns.push(result);
        note(`${title} r${round} limit: ${Object.entries(result.metrics).map(([k, v]) => `${k}=${v}`).join(" ")}`);
      } catch (e: unknown) {
        failures++;
        const message = e instanceof Error ? e.message : String(e);
        failed.push(`round ${round} limit failed: ${message.split("\n")[0]}`);
        note(`${title} r${round} limit FAILED: ${message}`);
      }
    }
  }
  const runNotes = runs.flatMap((r) => r.notes ?? []);
  scenarios.push({ id, title, params, metrics, runs, notes: [...notes, ...runNotes, ...failed], ...(options.limit === undefined ? {} : { limitRuns }) });
  return failed.length === 0;
};

/** machineFacts is the report's first section: the machine, the binaries and how this run was made. */
function machineFacts(): BenchResults["machine"] {
  return {
    date: startedAt,
    ...hostFacts(),
    goAttacher: kinds.includes("go") ? `${commandOutput([binaries.go.path, "--version"]).split("\n")[0] ?? ""} (${binaries.go.path})` : "not run",
    oursBinary: binaries.ours.path,
    oursCommit: commandOutput(["git", "describe", "--always", "--dirty"], repoRoot),
    kubeApiserver: components.kubeApiserver.split("/").pop() ?? components.kubeApiserver,
    oursHonoursQps,
    driverLatencyMs,
    driver: groundDriver,
    mode: modeName,
    rounds: roundsOfMode,
    wallSeconds: Math.round((performance.now() - wallStart) / 1000),
  };
}

/**
 * writeReport writes the report of what has finished so far; the scale
 * scenario calls it after each N too, so a run stopped during a large N
 * keeps the smaller ones.
 */
function writeReport(): BenchResults {
  const results: BenchResults = { machine: machineFacts(), scenarios, ...(monitoring === undefined ? {} : { monitoring }) };
  mkdirSync(outDir, { recursive: true });
  if (monitoring !== undefined) {
    mkdirSync(join(outDir, panelsDir), { recursive: true });
    for (const panel of monitoring.panels) writeFileSync(join(outDir, panel.file), panel.svg);
  }
  writeFileSync(`${reportStem}.json`, `${JSON.stringify(results, null, 1)}\n`);
  writeFileSync(`${reportStem}.html`, renderHtml(results));
  writeFileSync(`${reportStem}.md`, renderMarkdown(results, `${reportStem.split("/").pop() ?? "report"}.html`));
  return results;
}

/** The dashboard's main panels over the throughput scenario, once drawn. */
let monitoring: MonitoringPictures | undefined;
/** The panels' SVG files go beside the report, in <stem>-panels/. */
const panelsDir = `${basename(reportStem)}-panels`;
const run: BenchRun = {
  ctx,
  ground,
  mode,
  wanted,
  runScenario,
  driverKind,
  driverLatencyMs,
  qpsNote,
  binaries,
  floor,
  scaleParams,
  containerLimitParams,
  coldStartParams,
  kinds,
  prometheus: components.prometheus,
  panelsDir,
  writeReport,
};
try {
  for (const section of reportSections) {
    const extras = await section(run);
    if (extras?.monitoring !== undefined) monitoring = extras.monitoring;
  }
} finally {
  await watch.stop();
  await ground.stop();
}

const results = writeReport();
note(`wrote ${reportStem}.json, .html and .md in ${results.machine.wallSeconds} s`);
for (const scenario of scenarios) {
  for (const { againstFloor, ...row } of summarizeWithFloor(scenario)) {
    const floor = againstFloor === undefined ? "" : ` floor ${formatNumber(againstFloor.floor)} ours/floor ${formatNumber(againstFloor.oursOverFloor)}`;
    note(`${scenario.id} ${row.metric}: ours ${formatNumber(row.ours)} go ${formatNumber(row.go)} ratio ${formatNumber(row.ratio)}${floor}`);
  }
  const limit = summarizeLimit(scenario);
  if (limit !== undefined) note(`${scenario.id} limit: ${formatNumber(limit.limit)} VA/s, ours/limit ${formatNumber(limit.oursOverLimit)}, go/limit ${formatNumber(limit.goOverLimit)}`);
}
if (failures > 0) {
  note(`${failures} run(s) failed; see the notes in the report and the attacher logs in ${ground.logDir}`);
  process.exit(1);
}
// The attachers' logs only matter when something failed, or when asked for.
if (opts["keep-logs"]) note(`attacher logs kept in ${ground.logDir}`);
else rmSync(ground.logDir, { recursive: true, force: true });

/**
 * privateCopy copies a binary other work on this machine may also run (the
 * cached Go build), so its page cache is this bench's alone: a page another
 * process keeps cached would not be charged to the container-limit group.
 */
function privateCopy(path: string): string {
  if (path === "" || !wanted("container-limit")) return path;
  const copy = join(mkdtempSync(join(tmpdir(), "bench-bin-")), basename(path));
  copyFileSync(path, copy);
  chmodSync(copy, 0o755);
  return copy;
}

function buildOurs(): string {
  note("building dist/csi-attacher from this tree");
  const out = Bun.spawnSync([process.execPath, "run", "scripts/build.ts"], { cwd: repoRoot, stdout: "inherit", stderr: "inherit" });
  if (out.exitCode !== 0) throw new Error(`scripts/build.ts exited with ${out.exitCode}`);
  return join(repoRoot, "dist/csi-attacher");
}
