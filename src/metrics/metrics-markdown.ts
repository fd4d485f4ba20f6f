import { metricTable } from "./metric-table";

/** Where README.md's generated metrics table starts and ends. */
export const metricsTableMarkers = { start: "<!-- metrics:start (bun run readme:flags) -->", end: "<!-- metrics:end -->" } as const;

/**
 * metricsMarkdown renders the metric table as the Markdown table README.md
 * shows: name, kind, labels and help of every metric besides `process_*`.
 * Generated, so the README cannot drift from the code (a unit test compares them).
 */
export function metricsMarkdown(): string {
  const rows = Object.values(metricTable).map(
    (metric) => `| \`${metric.name}\` | ${metric.kind} | ${metric.labelNames.map((label) => `\`${label}\``).join(", ")} | ${metric.help.replaceAll("|", "\\|")} |`,
  );
  return ["| metric | kind | labels | help |", "|---|---|---|---|", ...rows].join("\n");
}
