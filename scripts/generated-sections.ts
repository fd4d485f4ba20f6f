/**
 * generated-sections says which generated table lives in which page, so the
 * script that writes them (scripts/readme-tables.ts) and the test that
 * compares them (test/unit/readme-tables.test.ts) read one list.
 */
import { join } from "node:path";
import { flagsMarkdown, flagsTableMarkers } from "../src/cli/flags-markdown";
import { metricsMarkdown, metricsTableMarkers } from "../src/metrics/metrics-markdown";
import { glanceTableMarkdown, glanceTableMarkers, memoryTableMarkdown, memoryTableMarkers, ratioTableMarkdown, ratioTableMarkers } from "./bench-figures";

/** GeneratedSection is a table between two marker comments, and what renders it. */
export interface GeneratedSection {
  readonly markers: { readonly start: string; readonly end: string };
  readonly render: () => string;
}

const root = join(import.meta.dir, "..");

/** The pages' absolute paths, each with the sections it holds. */
export const pagePaths = {
  readme: join(root, "README.md"),
  configuration: join(root, "docs/configuration.md"),
  metrics: join(root, "docs/metrics-and-monitoring.md"),
  benchmarks: join(root, "docs/benchmarks.md"),
} as const;

/** generatedSections lists every page with its generated sections. */
export function generatedSections(): [string, GeneratedSection[]][] {
  return [
    [
      pagePaths.readme,
      [
        { markers: memoryTableMarkers, render: () => memoryTableMarkdown("") },
        { markers: glanceTableMarkers, render: () => glanceTableMarkdown("") },
      ],
    ],
    [pagePaths.configuration, [{ markers: flagsTableMarkers, render: flagsMarkdown }]],
    [pagePaths.metrics, [{ markers: metricsTableMarkers, render: metricsMarkdown }]],
    [pagePaths.benchmarks, [{ markers: ratioTableMarkers, render: () => ratioTableMarkdown("../") }]],
  ];
}
