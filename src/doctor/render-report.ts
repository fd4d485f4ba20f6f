import type { VolumeAttachmentHealth } from "./assess-volume-attachment";
import type { DoctorReport } from "./doctor-report";
import { formatAge } from "./format-age";

const columns: readonly { readonly title: string; readonly cell: (row: VolumeAttachmentHealth) => string }[] = [
  { title: "NAME", cell: (row) => row.name },
  { title: "NODE", cell: (row) => row.node },
  { title: "PV", cell: (row) => row.pv },
  { title: "ATTACHED", cell: (row) => String(row.attached) },
  { title: "AGE", cell: (row) => formatAge(row.ageMs) },
  { title: "DRIVER", cell: (row) => row.driver },
  { title: "STATE", cell: (row) => row.state },
  // Last, because it is the only long one: the columns before it stay aligned.
  { title: "ERROR", cell: (row) => [row.error, row.detail].filter((text) => text !== "").join("; ") || "-" },
];

/**
 * renderTable prints the report as kubectl prints tables: a header line,
 * space-aligned columns, then one summary line.
 */
export function renderTable(report: DoctorReport): string {
  const cells = [columns.map((column) => column.title), ...report.volumeAttachments.map((row) => columns.map((column) => oneLine(column.cell(row))))];
  const widths = columns.map((_, index) => Math.max(...cells.map((line) => (line[index] ?? "").length)));
  const lines = cells.map((line) =>
    line
      .map((cell, index) => (index === line.length - 1 ? cell : cell.padEnd((widths[index] ?? 0) + 3)))
      .join("")
      .trimEnd(),
  );
  const checked = report.driver.checkedPublishedNodes
    ? "published nodes compared with the driver's ListVolumes"
    : "the driver cannot list published nodes (no LIST_VOLUMES_PUBLISHED_NODES): DRIVER unchecked";
  const verdict = report.problems === 0 ? "no problems" : `${report.problems} of ${report.volumeAttachments.length} with problems`;
  return [...lines, "", `driver ${report.driver.name}: ${report.volumeAttachments.length} VolumeAttachments, ${verdict}; ${checked}`].join("\n");
}

/** renderJson prints the report for scripts: the same rows, ages in seconds. */
export function renderJson(report: DoctorReport): string {
  return JSON.stringify(
    {
      driver: report.driver,
      problems: report.problems,
      volumeAttachments: report.volumeAttachments.map(({ ageMs, ...row }) => ({ ...row, ageSeconds: Math.floor(ageMs / 1000) })),
    },
    null,
    2,
  );
}

// A driver's error text can span lines; a table row must not.
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ");
}
