/**
 * readme-tables rewrites the generated tables of README.md and docs/: the
 * flags (from src/cli/flag-table.ts) in docs/configuration.md, the metrics
 * (from src/metrics/metric-table.ts) in docs/metrics-and-monitoring.md, and
 * the benchmark figures (from the committed reports, scripts/bench-figures.ts)
 * in README.md and docs/benchmarks.md. Run `bun run readme:flags` after
 * changing a flag, a metric or a cited report; test/unit/readme-tables.test.ts
 * fails until then.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { generatedSections } from "./generated-sections";

let failed = false;
for (const [path, sections] of generatedSections()) {
  const text = readFileSync(path, "utf8");
  let updated = text;
  for (const { markers, render } of sections) {
    const start = updated.indexOf(markers.start);
    const end = updated.indexOf(markers.end);
    if (start === -1 || end < start) {
      console.error(`${path} has no "${markers.start}" ... "${markers.end}" section to fill`);
      failed = true;
      continue;
    }
    updated = `${updated.slice(0, start + markers.start.length)}\n${render()}\n${updated.slice(end)}`;
  }
  writeFileSync(path, updated);
  console.log(updated === text ? `${path}: tables already current` : `${path}: tables updated`);
}
if (failed) process.exit(1);
