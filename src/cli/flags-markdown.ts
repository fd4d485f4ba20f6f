import { flags } from "./flag-table";

/** Where README.md's generated flags table starts and ends. */
export const flagsTableMarkers = { start: "<!-- flags:start (bun run readme:flags) -->", end: "<!-- flags:end -->" } as const;

/**
 * flagsMarkdown renders the flag table as the Markdown table README.md
 * shows: every flag sorted by name, its value type, upstream's default as
 * --help prints it (blank for the zero value), and the help text. Generated, so the README cannot
 * drift from the code (a unit test compares them).
 */
export function flagsMarkdown(): string {
  const rows = [...flags]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((flag) => {
      // Go spells one-letter flags with one dash in its usage; either works.
      const names = [flag.name, ...(flag.aliases ?? [])].map((name) => `\`${name.length === 1 ? "-" : "--"}${name}\``).join(", ");
      const shown = flag.kind.show(flag.defaultValue);
      // The help's back-quoted words stay: Markdown shows them as code.
      return `| ${names} | ${flag.kind.isBool ? "bool" : flag.kind.typeName} | ${shown === "" ? "" : `\`${shown}\``} | ${cell(flag.help)} |`;
    });
  return ["| flag | value | default | description |", "|---|---|---|---|", ...rows].join("\n");
}

// A table cell is one line, and a pipe would end it.
function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").replaceAll("|", "\\|");
}
