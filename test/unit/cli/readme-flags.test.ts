import { describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { flagsMarkdown, flagsTableMarkers } from "../../../src/cli/flags-markdown";

describe("README.md flags table", () => {
  it("is the one generated from the flag table (run `bun run readme:flags` after changing a flag)", () => {
    const readme = readFileSync(join(import.meta.dir, "../../../README.md"), "utf8");
    const start = readme.indexOf(flagsTableMarkers.start);
    const end = readme.indexOf(flagsTableMarkers.end);
    expect(start).toBeGreaterThan(-1);
    expect(readme.slice(start + flagsTableMarkers.start.length, end).trim()).toBe(flagsMarkdown());
  });
});
