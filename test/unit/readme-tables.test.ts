import { describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { flagsMarkdown, flagsTableMarkers } from "../../src/cli/flags-markdown";
import { metricsMarkdown, metricsTableMarkers } from "../../src/metrics/metrics-markdown";
import { recommendedMemoryLimit } from "../e2e/support/readme-memory-limits";

const readme = readFileSync(join(import.meta.dir, "../../README.md"), "utf8");

function section(markers: { start: string; end: string }): string | undefined {
  const start = readme.indexOf(markers.start);
  const end = readme.indexOf(markers.end);
  return start === -1 || end < start ? undefined : readme.slice(start + markers.start.length, end).trim();
}

describe("README.md generated tables (run `bun run readme:flags` after changing a flag or a metric)", () => {
  it("shows the flags of the flag table", () => {
    expect(section(flagsTableMarkers)).toBe(flagsMarkdown());
  });

  it("shows the metrics of the metric table", () => {
    expect(section(metricsTableMarkers)).toBe(metricsMarkdown());
  });
});

describe("README.md's memory table, which test/e2e/real-node reads its limit from", () => {
  it("gives a limits.memory quantity for each size, growing with the number of VAs", () => {
    const limits = [30, 300, 1000, 3000, 10000].map((volumeAttachments) => recommendedMemoryLimit(volumeAttachments));
    expect(limits.every((limit) => /^\d+Mi$/.test(limit.quantity) && limit.bytes === Number.parseInt(limit.quantity) * 2 ** 20)).toBe(true);
    expect(limits.map((limit) => limit.bytes)).toEqual(limits.map((limit) => limit.bytes).sort((a, b) => a - b));
  });

  it("names the size it has no row for", () => {
    expect(() => recommendedMemoryLimit(31)).toThrow("has no row for 31 VAs");
  });
});
