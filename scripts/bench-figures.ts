/**
 * bench-figures renders the benchmark figures an operator acts on, the
 * memory limits by cluster size and the ratios against the Go sidecar, from
 * the committed reports in bench/results/. The text quotes no number of its
 * own: scripts/readme-tables.ts writes these tables into README.md and
 * docs/benchmarks.md, and test/unit/readme-tables.test.ts fails when a
 * report and the text disagree.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { finiteValues, pairRatios } from "../bench/lib/ratios";
import type { BenchResults, ScenarioResult } from "../bench/lib/results";
import { median } from "../bench/lib/stats";

/** Where README.md's memory table starts and ends. */
export const memoryTableMarkers = { start: "<!-- memory:start (bun run readme:flags) -->", end: "<!-- memory:end -->" } as const;
/** Where README.md's ratios at a glance start and end. */
export const glanceTableMarkers = { start: "<!-- glance:start (bun run readme:flags) -->", end: "<!-- glance:end -->" } as const;
/** Where docs/benchmarks.md's full ratio table starts and ends. */
export const ratioTableMarkers = { start: "<!-- ratios:start (bun run readme:flags) -->", end: "<!-- ratios:end -->" } as const;

/**
 * The reports the figures come from: the run of 2026-11-29 19:11 (issue
 * 36: the binary whose API requests and driver calls both run on our own
 * HTTP/2 client over Bun's own sockets, with the cache's compiled parser,
 * built to read no .env or bunfig.toml, its generated descriptors hydrated
 * without descriptor.proto, its log calls' sites written in by the build,
 * its metrics without prom-client's index;
 * the floor at 10 and at 100 workers), its cold starts on fresh grounds and
 * its 10,000-volume run, and the 100,000-volume run of 2026-11-28 09:10
 * (the same HTTP/2 stack, before the later levers), all as the binary
 * shipped (DFG and FTL off, Bun's GC timer off).
 */
export const reports = {
  /** The full run: every scenario but scale; the container limits on a cluster holding only the N volumes. */
  full: "2026-11-29T1911",
  /** 100,000 volumes, one round, the same stack. */
  edge: "2026-11-28T0910-scale-100k-h2",
  /** 10,000 volumes (+ 10,000 of other drivers), three rounds, the full run's binary. */
  scale10k: "2026-11-29T1946-scale-10k",
  /** Cold start with 100 VAs waiting on a fresh ground, the floor beside ours and Go. */
  cold100: "2026-11-29T1944-cold-start-floor-100",
  /** The same with 300 VAs waiting. */
  cold300: "2026-11-29T1944-cold-start-floor-300",
  /** 300 VAs waiting again, on another fresh ground. */
  cold300again: "2026-11-29T1945-cold-start-floor-300-again",
  /** 100 VAs waiting, ours with the image's runtime options in its environment, as in a container: no re-exec. */
  coldImage: "2026-11-29T1945-cold-start-image-env",
} as const;

/** ReportName names one of the reports above. */
export type ReportName = keyof typeof reports;

/**
 * Headroom over what a size needs, so that a limit does not sit on the edge
 * where the kernel starts evicting the binary's pages (the attacher crawls
 * there rather than being killed, which is harder to notice).
 */
export const headroomMiB = 24;
/** Limits are rounded up to this step, the step the bench's limit walk takes twice over. */
export const limitStepMiB = 16;

const resultsDir = join(import.meta.dir, "../bench/results");
const loaded = new Map<ReportName, BenchResults>();

/** report reads a committed report's JSON once. */
function report(name: ReportName): BenchResults {
  let results = loaded.get(name);
  if (results === undefined) {
    results = JSON.parse(readFileSync(join(resultsDir, `${reports[name]}.json`), "utf8")) as BenchResults;
    loaded.set(name, results);
  }
  return results;
}

function scenario(name: ReportName, id: string): ScenarioResult {
  const found = report(name).scenarios.find((candidate) => candidate.id === id);
  if (found === undefined) throw new Error(`bench/results/${reports[name]}.json has no scenario "${id}"`);
  return found;
}

/** medianOf is the median of `metric` over the runs of `kind` in a scenario; throws when no run measured it. */
function medianOf(name: ReportName, id: string, metric: string, kind: "ours" | "go" | "floor"): number {
  const value = median(finiteValues(scenario(name, id).runs.filter((run) => run.kind === kind), metric));
  if (Number.isNaN(value)) throw new Error(`bench/results/${reports[name]}.json: no ${kind} run of "${id}" measured ${metric}`);
  return value;
}

/** The pair ratios ours/`against`, round by round, as the reports compute them. */
function roundRatios(name: ReportName, id: string, metric: string, against: "go" | "floor"): number[] {
  const runs = scenario(name, id).runs;
  const ratios = pairRatios(
    runs.filter((run) => run.kind === "ours"),
    runs.filter((run) => run.kind === against),
    metric,
  );
  if (ratios.length === 0) throw new Error(`bench/results/${reports[name]}.json: no round of "${id}" pairs ours and ${against} on ${metric}`);
  return ratios;
}

/** limitFor is the `limits.memory` in MiB for a size that needs `neededMiB`: headroom added, rounded up to the step. */
export function limitFor(neededMiB: number): number {
  return Math.ceil((neededMiB + headroomMiB) / limitStepMiB) * limitStepMiB;
}

function link(name: ReportName, linkBase: string): string {
  return `${linkBase}bench/results/${reports[name]}.md`;
}

const mib = (value: number): string => `${Math.round(value).toLocaleString("en-US")} MiB`;

/** A row of the memory table: how many VAs, and where what they need comes from. */
type MemoryRow =
  | { readonly label: string; readonly basis: "limit walk"; readonly report: ReportName; readonly scenario: string }
  | { readonly label: string; readonly basis: "extrapolated"; readonly volumeAttachments: number }
  | { readonly label: string; readonly basis: "peak RSS"; readonly report: ReportName; readonly scenario: string };

const memoryRows: readonly MemoryRow[] = [
  { label: "30 (an edge or k3s cluster)", basis: "limit walk", report: "full", scenario: "container-limit-n30" },
  { label: "300", basis: "limit walk", report: "full", scenario: "container-limit-n300" },
  { label: "1,000", basis: "limit walk", report: "full", scenario: "container-limit-n1000" },
  { label: "3,000", basis: "extrapolated", volumeAttachments: 3000 },
  { label: "10,000 (+ 10,000 PVs of other drivers)", basis: "peak RSS", report: "scale10k", scenario: "scale-n10000" },
  { label: "100,000 (+ 10,000 PVs of other drivers)", basis: "peak RSS", report: "edge", scenario: "scale-n100000" },
];

/** The row the extrapolated sizes grow from, and the report that gives its slope. */
const extrapolatedFrom = { volumeAttachments: 1000, report: "full", scenario: "container-limit-n1000", slopeScenario: "memory" } as const;

/** memoryGrowthPer1000MiB is the full run's RSS growth per 1,000 own attached VAs (ours), which the extrapolated rows add. */
export function memoryGrowthPer1000MiB(): number {
  return medianOf(extrapolatedFrom.report, extrapolatedFrom.slopeScenario, "slopeMiBPer1000", "ours");
}

/** MemoryFigure is what one row of the table says. */
export interface MemoryFigure {
  readonly label: string;
  /** What ours needed (or is expected to need) in MiB. */
  readonly oursMiB: number;
  /** What the Go sidecar needed in MiB, where it was measured. */
  readonly goMiB?: number;
  /** The recommended limits.memory in MiB. */
  readonly limitMiB: number;
  readonly basis: MemoryRow["basis"];
  readonly report: ReportName;
}

/** memoryFigures computes every row of the memory table from the reports. */
export function memoryFigures(): MemoryFigure[] {
  return memoryRows.map((row) => {
    switch (row.basis) {
      case "limit walk": {
        const oursMiB = medianOf(row.report, row.scenario, "smallestLimitMiB", "ours");
        const goMiB = medianOf(row.report, row.scenario, "smallestLimitMiB", "go");
        return { label: row.label, oursMiB, goMiB, limitMiB: limitFor(oursMiB), basis: row.basis, report: row.report };
      }
      case "extrapolated": {
        const base = medianOf(extrapolatedFrom.report, extrapolatedFrom.scenario, "smallestLimitMiB", "ours");
        const oursMiB = base + ((row.volumeAttachments - extrapolatedFrom.volumeAttachments) / 1000) * memoryGrowthPer1000MiB();
        return { label: row.label, oursMiB, limitMiB: limitFor(oursMiB), basis: row.basis, report: extrapolatedFrom.report };
      }
      case "peak RSS": {
        const oursMiB = medianOf(row.report, row.scenario, "hwmMiB", "ours");
        const goMiB = medianOf(row.report, row.scenario, "hwmMiB", "go");
        return { label: row.label, oursMiB, goMiB, limitMiB: limitFor(oursMiB), basis: row.basis, report: row.report };
      }
    }
  });
}

/**
 * memoryTableMarkdown renders the memory table README.md shows under
 * "Memory limits by cluster size", links relative to `linkBase` (the path
 * from the page to the repository's root).
 */
export function memoryTableMarkdown(linkBase = ""): string {
  const rows = memoryFigures().map((figure) => {
    const how =
      figure.basis === "limit walk"
        ? `smallest limit that held, [measured](${link(figure.report, linkBase)})`
        : figure.basis === "extrapolated"
          ? `extrapolated: 1,000's + ${memoryGrowthPer1000MiB().toFixed(1)} MiB per 1,000 more ([growth](${link(figure.report, linkBase)}))`
          : `peak RSS, relist after 410 Gone included, [measured](${link(figure.report, linkBase)})`;
    const ours = figure.basis === "extrapolated" ? `~${mib(figure.oursMiB)}` : mib(figure.oursMiB);
    const go = figure.goMiB === undefined ? "" : mib(figure.goMiB);
    return `| ${figure.label} | ${ours} | ${go} | ${figure.limitMiB}Mi | ${how} |`;
  });
  return [
    "| VAs of this driver | ours needs | Go sidecar needs | `limits.memory` | from |",
    "|---:|---:|---:|---:|---|",
    ...rows,
    "",
    `\`limits.memory\` is what the size needs plus ${headroomMiB} MiB, rounded up to ${limitStepMiB} MiB.`,
  ].join("\n");
}

/** One ratio in a row: a scenario's metric, ours over Go or over the floor. */
interface RatioCell {
  readonly scenario: string;
  readonly metric: string;
}

/** A row of a ratio table: its cells all come from one report. */
interface RatioRow {
  readonly label: string;
  readonly report: ReportName;
  readonly against: "go" | "floor";
  readonly cells: readonly RatioCell[];
  /** Show the rounds' spread of the last cell, for a median that the rounds disagree on. */
  readonly spread?: true;
}

const cells = (scenarioId: string, ...metrics: string[]): RatioCell[] => metrics.map((metric) => ({ scenario: scenarioId, metric }));

const attachRate: RatioRow = { label: "attach rate, 1,000 VAs at once, 10 / 100 workers", report: "full", against: "go", cells: [...cells("throughput-w10-q1000", "attachPerSecond"), ...cells("throughput-w100-q1000", "attachPerSecond")] };
const cyclesCpu: RatioRow = { label: "CPU per 1,000 attach+detach cycles, 10 / 100 workers", report: "full", against: "go", cells: [...cells("throughput-w10-q1000", "cpuSecondsPer1000"), ...cells("throughput-w100-q1000", "cpuSecondsPer1000")] };
const burstPeak: RatioRow = { label: "peak RSS, 1,000 VAs, 10 / 100 workers", report: "full", against: "go", cells: [...cells("throughput-w10-q1000", "peakRssMiB"), ...cells("throughput-w100-q1000", "peakRssMiB")] };
const fairness: RatioRow = { label: "a new attach behind 200 slow detaches", report: "full", against: "go", cells: cells("fairness", "newAttachMs") };
const coldStart: RatioRow = { label: "cold start, 100 VAs waiting: to ready / first attach / all attached", report: "cold100", against: "go", cells: cells("cold-start", "readyMs", "firstAttachedMs", "allAttachedMs") };

/** The rows of README's performance at a glance. */
const glanceRows: readonly RatioRow[] = [
  attachRate,
  cyclesCpu,
  burstPeak,
  { label: "RSS idle, empty cluster", report: "full", against: "go", cells: cells("idle", "idleRssMiB") },
  fairness,
  coldStart,
  { label: "100,000 volumes: exec to ready / all attached / peak RSS", report: "edge", against: "go", cells: cells("scale-n100000", "readyMs", "allAttachedMs", "hwmMiB") },
];

/** The rows of docs/benchmarks.md's ratio table. */
const fullRows: readonly RatioRow[] = [
  attachRate,
  cyclesCpu,
  burstPeak,
  { label: "detach time, 1,000 VAs, 10 / 100 workers", report: "full", against: "go", cells: [...cells("throughput-w10-q1000", "detachSeconds"), ...cells("throughput-w100-q1000", "detachSeconds")] },
  { label: "ready with 100 workers, no VAs", report: "full", against: "go", cells: cells("throughput-w100-q1000", "readyMs") },
  { label: "RSS idle / anonymous idle, empty cluster", report: "full", against: "go", cells: cells("idle", "idleRssMiB", "idleAnonMiB") },
  { label: "RSS / anonymous with 10,000 PVs of other drivers", report: "full", against: "go", cells: cells("memory", "rssWithForeignMiB", "anonWithForeignMiB") },
  { label: "RSS growth per 1,000 own attached VAs", report: "full", against: "go", cells: cells("memory", "slopeMiBPer1000") },
  { label: "p50 / p99 attach latency at 20 VA/s (p99: the rounds disagree, noise)", report: "full", against: "go", cells: cells("latency", "p50Ms", "p99Ms"), spread: true },
  fairness,
  { label: "CPU per 1,000 cycles at upstream's qps 5/burst 10, 50 VAs, 10 / 100 workers", report: "full", against: "go", cells: [...cells("throughput-w10-q5", "cpuSecondsPer1000"), ...cells("throughput-w100-q5", "cpuSecondsPer1000")] },
  { label: "smallest memory limit, 30 / 300 / 1,000 VAs, the cluster holding only them", report: "full", against: "go", cells: cells("container-limit-n30", "smallestLimitMiB").concat(cells("container-limit-n300", "smallestLimitMiB"), cells("container-limit-n1000", "smallestLimitMiB")) },
  { label: "200 Pods through kube-controller-manager: attached / CPU per 1,000 / peak RSS", report: "full", against: "go", cells: cells("pods", "attachSeconds", "cpuSecondsPer1000", "peakRssMiB") },
  { label: "cold start, 100 VAs waiting, full run: to ready / first attach / all attached", report: "full", against: "go", cells: cells("cold-start", "readyMs", "firstAttachedMs", "allAttachedMs") },
  coldStart,
  { label: "the same in the image's environment (runtime options set, no re-exec)", report: "coldImage", against: "go", cells: cells("cold-start", "readyMs", "firstAttachedMs", "allAttachedMs") },
  { label: "CPU of 300 waiting VAs attached and detached, start-up included", report: "cold300", against: "go", cells: cells("cold-start", "cycleCpuS") },
  { label: "the same on another fresh ground", report: "cold300again", against: "go", cells: cells("cold-start", "cycleCpuS") },
  { label: "100,000 volumes: exec to ready / relist after 410 Gone / all attached", report: "edge", against: "go", cells: cells("scale-n100000", "readyMs", "relistMs", "allAttachedMs") },
  { label: "100,000 volumes: settled RSS / peak RSS / CPU of the whole run", report: "edge", against: "go", cells: cells("scale-n100000", "rssSettledMiB", "hwmMiB", "cpuTotalS") },
  { label: "floor scenario, 1,000 VAs, 10 / 100 workers: CPU per 1,000 cycles", report: "full", against: "floor", cells: [...cells("floor", "cpuSecondsPer1000"), ...cells("floor-w100", "cpuSecondsPer1000")] },
  { label: "floor scenario, 1,000 VAs, 10 / 100 workers: peak RSS", report: "full", against: "floor", cells: [...cells("floor", "peakRssMiB"), ...cells("floor-w100", "peakRssMiB")] },
  { label: "smallest memory limit, 30 / 300 / 1,000 VAs, the cluster holding only them", report: "full", against: "floor", cells: cells("container-limit-n30", "smallestLimitMiB").concat(cells("container-limit-n300", "smallestLimitMiB"), cells("container-limit-n1000", "smallestLimitMiB")) },
  { label: "cold start, 100 VAs waiting: to ready / first attach / all attached", report: "cold100", against: "floor", cells: cells("cold-start", "readyMs", "firstAttachedMs", "allAttachedMs") },
  { label: "CPU of 300 waiting VAs attached and detached, start-up included", report: "cold300", against: "floor", cells: cells("cold-start", "cycleCpuS") },
  { label: "the same on another fresh ground", report: "cold300again", against: "floor", cells: cells("cold-start", "cycleCpuS") },
];

const ratio = (value: number): string => `${value.toFixed(2)}x`;

function ratioRowMarkdown(row: RatioRow, linkBase: string): string {
  const ratios = row.cells.map((cell) => roundRatios(row.report, cell.scenario, cell.metric, row.against));
  let shown = ratios.map((rounds) => ratio(median(rounds))).join(" / ");
  const last = ratios.at(-1);
  if (row.spread === true && last !== undefined) shown += ` (rounds ${ratio(Math.min(...last))}-${ratio(Math.max(...last))})`;
  const better = new Set(row.cells.map((cell) => scenario(row.report, cell.scenario).metrics.find((spec) => spec.name === cell.metric)?.better));
  if (better.size !== 1) throw new Error(`"${row.label}" mixes metrics where lower is better with ones where higher is`);
  const direction = better.has("higher") ? "above 1" : "below 1";
  return `| ${row.label} | ${row.against === "go" ? "Go" : "floor"} | ${shown} | ${direction} | [${reports[row.report]}](${link(row.report, linkBase)}) |`;
}

function ratioTable(rows: readonly RatioRow[], linkBase: string): string {
  return ["| | ours / | ratio | ours better | report |", "|---|---|---:|---|---|", ...rows.map((row) => ratioRowMarkdown(row, linkBase))].join("\n");
}

/** glanceTableMarkdown renders README's performance at a glance. */
export function glanceTableMarkdown(linkBase = ""): string {
  return ratioTable(glanceRows, linkBase);
}

/** ratioTableMarkdown renders docs/benchmarks.md's ratio table, links relative to docs/. */
export function ratioTableMarkdown(linkBase = "../"): string {
  return ratioTable(fullRows, linkBase);
}
