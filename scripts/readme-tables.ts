/**
 * readme-tables rewrites README.md's generated tables: the flags (from
 * src/cli/flag-table.ts) and the metrics (from src/metrics/metric-table.ts).
 * Run `bun run readme:flags` after adding or changing a flag or a metric;
 * test/unit/readme-tables.test.ts fails until then.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { flagsMarkdown, flagsTableMarkers } from "../src/cli/flags-markdown";
import { metricsMarkdown, metricsTableMarkers } from "../src/metrics/metrics-markdown";

const readmePath = join(import.meta.dir, "../README.md");
const readme = readFileSync(readmePath, "utf8");
let updated = readme;
for (const [markers, table] of [
  [flagsTableMarkers, flagsMarkdown()],
  [metricsTableMarkers, metricsMarkdown()],
] as const) {
  const start = updated.indexOf(markers.start);
  const end = updated.indexOf(markers.end);
  if (start === -1 || end < start) {
    console.error(`README.md has no "${markers.start}" ... "${markers.end}" section to fill`);
    process.exit(1);
  }
  updated = `${updated.slice(0, start + markers.start.length)}\n${table}\n${updated.slice(end)}`;
}
writeFileSync(readmePath, updated);
console.log(updated === readme ? "README.md tables already current" : "README.md tables updated");
