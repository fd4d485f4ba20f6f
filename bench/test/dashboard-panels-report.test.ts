import { describe, expect, it } from "bun:test";
import type { BenchResults } from "../lib/results";
import { renderHtml } from "../report/render-html";
import { renderMarkdown } from "../report/render-markdown";

describe("the report's dashboard panels", () => {
  const results = {
    machine: { date: "2026-11-26T11:50:00Z", mode: "quick", oursCommit: "abc", goAttacher: "v4.13.0", kubeApiserver: "kube-apiserver", bunVersion: "1", oursBinary: "dist/csi-attacher", cpuModel: "cpu" },
    scenarios: [],
    monitoring: {
      scenario: "throughput",
      description: "scraped every second",
      panels: [
        { title: "Queue depth", file: "2026-11-26T1150-panels/queue-depth.svg", svg: '<svg id="queue-depth"></svg>' },
        { title: "Leader per replica", file: "2026-11-26T1150-panels/leader-per-replica.svg", svg: '<svg id="leader"></svg>' },
      ],
      empty: ["Leader per replica"],
    },
  } as unknown as BenchResults;

  it("links each panel's SVG file from the markdown, and names the panels without data", () => {
    const markdown = renderMarkdown(results, "report.html");
    expect(markdown.split("\n").filter((line) => line.startsWith("![") || line.startsWith("No data"))).toEqual([
      "No data over this run: Leader per replica.",
      "![Queue depth](2026-11-26T1150-panels/queue-depth.svg)",
      "![Leader per replica](2026-11-26T1150-panels/leader-per-replica.svg)",
    ]);
  });

  it("inlines the SVGs in the HTML, and shows no section when the run drew none", () => {
    expect(renderHtml(results).match(/<svg id="[a-z-]+">/g)).toEqual(['<svg id="queue-depth">', '<svg id="leader">']);
    const { monitoring: _, ...without } = results;
    expect(renderHtml(without)).not.toContain("The dashboard over");
  });
});
