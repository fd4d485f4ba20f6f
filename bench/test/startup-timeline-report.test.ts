import { describe, expect, it } from "bun:test";
import type { BenchResults, RunResult } from "../lib/results";
import { startupMarks } from "../lib/startup-timeline";
import { timelineHtml, timelineMarkdown, timelineRows } from "../report/startup-timeline";

const format = (x: number) => (Number.isFinite(x) ? String(x) : "–");

/** A run whose every mark is `at` ms from exec, but the first, which is `flags`. */
function run(kind: "ours" | "go", round: number, flags: number, at: number): RunResult {
  const startupTimeline = Object.fromEntries(startupMarks.map((mark, i) => [mark.id, i === 0 ? flags : at]));
  return { kind, round, metrics: {}, startupTimeline };
}

function coldStart(runs: RunResult[]): BenchResults {
  return { machine: {}, scenarios: [{ id: "cold-start", title: "Cold start", params: {}, metrics: [], runs, notes: [] }] } as unknown as BenchResults;
}

describe("the report's start-up timeline", () => {
  it("gives each mark's medians over rounds and the median of per-round ours/Go pairs", () => {
    // flags parsed: pairs 2, 1 and 3 (median 2); the next mark: Go 250, 500, 1000 against ours 500, pairs 2, 1, 0.5 (median 1).
    const rows = timelineRows(coldStart([run("ours", 1, 200, 500), run("go", 1, 100, 250), run("ours", 2, 100, 500), run("go", 2, 100, 500), run("ours", 3, 300, 500), run("go", 3, 100, 1000)]));
    expect(rows.length).toBe(startupMarks.length);
    expect(rows[0]).toMatchObject({ label: "flags parsed", ours: 200, go: 100, ratio: 2 });
    expect(rows[1]).toMatchObject({ ours: 500, go: 500, ratio: 1 });
  });

  it("names the line each figure is read from, and the bench's watch for the last two", () => {
    const rows = timelineRows(coldStart([run("ours", 1, 1, 2), run("go", 1, 1, 2)]));
    expect(rows.map((row) => row.oursLine).slice(-2)).toEqual(["the bench's watch: status.attached", "the bench's watch: status.attached"]);
    expect(rows.find((row) => row.label === "caches synced, workers start")?.oursLine).toBe('"Caches synced"');
  });

  it("shows nothing for a run without a timeline (an older report, or no cold-start scenario)", () => {
    const old = coldStart([{ kind: "ours", round: 1, metrics: { readyMs: 1 } }]);
    expect([timelineRows(old), timelineMarkdown(old, format), timelineHtml(old, format)]).toEqual([[], [], ""]);
  });

  it("draws ours' and Go's bar for every mark", () => {
    const html = timelineHtml(coldStart([run("ours", 1, 10, 20), run("go", 1, 5, 10)]), format);
    // One of ours per mark, and the legend.
    expect(html.match(/<rect [^>]*fill="#1f6fd1"/g)?.length).toBe(startupMarks.length + 1);
    expect(html.match(/<rect [^>]*fill="#e07b00"/g)?.length).toBe(startupMarks.length + 1);
  });
});
