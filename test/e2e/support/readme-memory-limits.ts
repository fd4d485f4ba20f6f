/**
 * README's "Memory limits by cluster size" table, read as an operator reads
 * it: the `limits.memory` it recommends for a number of VolumeAttachments
 * of the driver. A test that runs the Deployment at a recommended limit
 * takes the figure from here, so that the README and what was verified
 * cannot drift apart.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { quantityKind } from "../../../src/cli/flag-kinds";

const readmePath = join(import.meta.dir, "../../../README.md");
const sectionHeading = "### Memory limits by cluster size";
/** The header of the column operators copy into the manifest. */
const limitColumn = "`limits.memory`";

/** The cells of a markdown table line, trimmed; undefined for a line that is not one. */
function tableCells(line: string): string[] | undefined {
  if (!line.startsWith("|")) return undefined;
  return line.split("|").slice(1, -1).map((cell) => cell.trim());
}

/**
 * recommendedMemoryLimit is the `limits.memory` of the table's row for
 * `volumeAttachments` VAs (its first cell starts with that number), as the
 * README writes it ("112Mi"), with its value in bytes. Throws, naming what
 * it looked for, when the README no longer has that table, column or row.
 */
export function recommendedMemoryLimit(volumeAttachments: number): { quantity: string; bytes: number } {
  const readme = readFileSync(readmePath, "utf8");
  const start = readme.indexOf(sectionHeading);
  if (start === -1) throw new Error(`${readmePath} has no "${sectionHeading}" section`);
  const sectionLines = readme.slice(start + sectionHeading.length).split("\n");
  const end = sectionLines.findIndex((line) => line.startsWith("#"));
  const rows = (end === -1 ? sectionLines : sectionLines.slice(0, end)).map(tableCells).filter((cells) => cells !== undefined);
  const column = rows[0]?.indexOf(limitColumn) ?? -1;
  if (column === -1) throw new Error(`README's "${sectionHeading}" table has no ${limitColumn} column`);
  const row = rows.find((cells) => Number(/^[\d,]+/.exec(cells[0] ?? "")?.[0].replaceAll(",", "")) === volumeAttachments);
  const quantity = row?.[column];
  if (quantity === undefined) throw new Error(`README's "${sectionHeading}" table has no row for ${volumeAttachments} VAs`);
  const read = quantityKind.read(quantity, undefined);
  if (!read.ok) throw new Error(`README's ${limitColumn} for ${volumeAttachments} VAs, "${quantity}", is not a quantity`);
  return { quantity, bytes: read.value };
}
