/**
 * readme-flags rewrites the flags table in README.md from the flag table in
 * src/cli/flag-table.ts: `bun run readme:flags` after adding or changing a
 * flag (test/unit/cli/readme-flags.test.ts fails until then).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { flagsMarkdown, flagsTableMarkers } from "../src/cli/flags-markdown";

const readmePath = join(import.meta.dir, "../README.md");
const readme = readFileSync(readmePath, "utf8");
const start = readme.indexOf(flagsTableMarkers.start);
const end = readme.indexOf(flagsTableMarkers.end);
if (start === -1 || end < start) {
  console.error(`README.md has no "${flagsTableMarkers.start}" ... "${flagsTableMarkers.end}" section to fill`);
  process.exit(1);
}
const updated = `${readme.slice(0, start + flagsTableMarkers.start.length)}\n${flagsMarkdown()}\n${readme.slice(end)}`;
writeFileSync(readmePath, updated);
console.log(updated === readme ? "README.md flags table already current" : "README.md flags table updated");
