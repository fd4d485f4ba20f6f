import { describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { flagsMarkdown, flagsTableMarkers } from "../../src/cli/flags-markdown";
import { metricsMarkdown, metricsTableMarkers } from "../../src/metrics/metrics-markdown";

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
