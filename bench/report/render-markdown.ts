/** The markdown summary: machine facts and the ratio table, linking the HTML report. */
import { summarizeLimit } from "../lib/limit-ratios";
import { summarizeWithFloor } from "../lib/floor-ratios";
import { summarize } from "../lib/ratios";
import type { BenchResults } from "../lib/results";
import { memorySlope, scaleScenarios } from "./scale-charts";
import { timelineMarkdown } from "./startup-timeline";

/** formatNumber keeps 3 significant digits; NaN shows as a dash. */
export function formatNumber(x: number): string {
  if (!Number.isFinite(x)) return "–";
  if (Math.abs(x) >= 100) return String(Math.round(x));
  return String(Number(x.toPrecision(3)));
}

/** verdict says whether ours/go is a win for ours, given which direction is better. */
export function verdict(ratio: number, better: "lower" | "higher"): string {
  if (!Number.isFinite(ratio)) return "";
  const win = better === "lower" ? ratio < 0.95 : ratio > 1.05;
  const loss = better === "lower" ? ratio > 1.05 : ratio < 0.95;
  return win ? "ours better" : loss ? "Go better" : "even";
}

/**
 * limitRows are the throughput cells the bare client ran next to: its median
 * attach rate and each attacher's share of it (issue 8's target: ours >= 0.9).
 */
export function limitRows(results: BenchResults): { title: string; limit: number; oursOverLimit: number; goOverLimit: number }[] {
  return results.scenarios.flatMap((scenario) => {
    const summary = summarizeLimit(scenario);
    return summary === undefined ? [] : [{ title: scenario.title, ...summary }];
  });
}

/** FloorRow is one metric of a scenario the floor ran in: ours, Go and the floor side by side. */
export interface FloorRow {
  readonly title: string;
  readonly metric: string;
  readonly unit: string;
  readonly ours: number;
  readonly go: number;
  readonly floor: number;
  /** ours/Go */
  readonly ratio: number;
  readonly oursOverFloor: number;
}

/** floorRows are the metrics of every scenario the bare floor client ran in. */
export function floorRows(results: BenchResults): FloorRow[] {
  return results.scenarios.flatMap((scenario) =>
    summarizeWithFloor(scenario).flatMap(({ againstFloor, ...row }) =>
      againstFloor === undefined ? [] : [{ title: scenario.title, metric: row.metric, unit: row.unit, ours: row.ours, go: row.go, floor: againstFloor.floor, ratio: row.ratio, oursOverFloor: againstFloor.oursOverFloor }],
    ),
  );
}

/** machineLines lists the facts every report carries. */
export function machineLines(results: BenchResults): [string, string][] {
  const m = results.machine;
  return [
    ["date", m.date],
    ["mode / rounds", `${m.mode} / ${m.rounds} (A B per round: ours then Go, then the floor where it runs)`],
    ["machine", `${m.cpuModel}, ${m.cores} cores, ${m.memoryGiB} GiB, Linux ${m.kernel} (shared with other work)`],
    ["Bun", m.bunVersion],
    ["ours", `${m.oursBinary} @ ${m.oursCommit}; honours --kube-api-qps: ${m.oursHonoursQps ? "yes" : "no"}`],
    ["Go attacher", m.goAttacher],
    ["test ground", `${m.kubeApiserver} + etcd; ${m.driver === "mock" ? "Kubernetes' mock CSI driver" : `fake CSI driver (publish/unpublish latency ${m.driverLatencyMs} ms)`}`],
    ["wall time", `${m.wallSeconds} s`],
  ];
}

export function renderMarkdown(results: BenchResults, htmlName: string): string {
  const lines: string[] = [`# Benchmark: bun-csi-attacher vs Go csi-attacher (${results.machine.mode})`, "", `Full report with curves: [${htmlName}](${htmlName})`, ""];
  for (const [k, v] of machineLines(results)) lines.push(`- **${k}**: ${v}`);
  lines.push("", "Ratio = median over rounds of ours/Go, each round's pair run back to back.", "");
  lines.push("| scenario | metric | ours | Go | ours/Go | |", "|---|---|---:|---:|---:|---|");
  for (const scenario of results.scenarios) {
    for (const row of summarize(scenario)) {
      lines.push(`| ${scenario.title} | ${row.metric} (${row.unit}, ${row.better} is better) | ${formatNumber(row.ours)} | ${formatNumber(row.go)} | ${formatNumber(row.ratio)} | ${verdict(row.ratio, row.better)} |`);
    }
  }
  lines.push(...timelineMarkdown(results, formatNumber));
  const limits = limitRows(results);
  if (limits.length > 0) {
    lines.push("", "Against the bare-client limit (scenario 7: the same API writes per VA, no CSI, no caches, same workers; median over rounds of each round's attacher/limit):", "");
    lines.push("| scenario | limit (VA/s) | ours/limit | Go/limit |", "|---|---:|---:|---:|");
    for (const row of limits) lines.push(`| ${row.title} | ${formatNumber(row.limit)} | ${formatNumber(row.oursOverLimit)} | ${formatNumber(row.goOverLimit)} |`);
  }
  const scale = scaleScenarios(results);
  if (scale.length > 1) {
    lines.push("", `Scale, memory per 1,000 own VAs between N=${scale[0]?.params.n} and N=${scale[scale.length - 1]?.params.n} (settled, after all attached):`, "");
    lines.push("| | ours | Go |", "|---|---:|---:|");
    lines.push(`| VmRSS (MiB / 1,000 VAs) | ${formatNumber(memorySlope(scale, "ours"))} | ${formatNumber(memorySlope(scale, "go"))} |`);
    lines.push(`| RssAnon (MiB / 1,000 VAs) | ${formatNumber(memorySlope(scale, "ours", "anonSettledMiB"))} | ${formatNumber(memorySlope(scale, "go", "anonSettledMiB"))} |`);
  }
  const floors = floorRows(results);
  if (floors.length > 0) {
    lines.push("", "Ours, Go and Bun's floor (the bare compiled client, bench/floor/bare-attacher.ts; load-only = floor a); ratios are medians of per-round pairs:", "");
    lines.push("| scenario | metric | ours | Go | floor | ours/Go | ours/floor |", "|---|---|---:|---:|---:|---:|---:|");
    for (const row of floors) lines.push(`| ${row.title} | ${row.metric} (${row.unit}) | ${formatNumber(row.ours)} | ${formatNumber(row.go)} | ${formatNumber(row.floor)} | ${formatNumber(row.ratio)} | ${formatNumber(row.oursOverFloor)} |`);
  }
  const monitoring = results.monitoring;
  if (monitoring !== undefined) {
    lines.push("", `The dashboard's main panels over the ${monitoring.scenario} scenario (deploy/monitoring/dashboard.json's queries, drawn without Grafana). ${monitoring.description}`, "");
    if (monitoring.empty.length > 0) lines.push(`No data over this run: ${monitoring.empty.join(", ")}.`, "");
    for (const panel of monitoring.panels) lines.push(`![${panel.title}](${panel.file})`);
  }
  const notes = results.scenarios.flatMap((s) => s.notes.map((n) => `- ${s.title}: ${n}`));
  if (notes.length > 0) lines.push("", "Notes:", "", ...notes);
  lines.push("");
  return lines.join("\n");
}
