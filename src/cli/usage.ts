import type { SomeFlag } from "./flag-definition";
import { flags } from "./flag-table";

/**
 * usage renders --help from the flag table in the layout of Go's
 * flag.PrintDefaults, which upstream prints: flags sorted by name, a
 * back-quoted word in the help naming the value, the default when it is not
 * the zero value.
 */
export function usage(program = "csi-attacher"): string {
  return `Usage of ${program}:\n${flagDefaults(flags)}`;
}

/**
 * flagDefaults is Go's flag.PrintDefaults for one table: a line (or two) per
 * flag, sorted by name. The attacher's --help is its table's; a subcommand
 * with flags of its own (the doctor) prints its table's the same way.
 */
export function flagDefaults(table: readonly SomeFlag[]): string {
  const lines: string[] = [];
  for (const flag of [...table].sort((a, b) => a.name.localeCompare(b.name))) {
    const { valueName, help } = unquoteUsage(flag.help, flag.kind.typeName);
    const head = `  -${flag.name}${valueName === "" ? "" : ` ${valueName}`}`;
    const shownDefault = flag.kind.show(flag.defaultValue);
    const body = `${help.replaceAll("\n", "\n    \t")}${shownDefault === "" ? "" : ` (default ${shownDefault})`}`;
    // Go puts the help of a short flag with no value name on the same line.
    lines.push(head.length <= 4 ? `${head}\t${body}` : `${head}\n    \t${body}`);
  }
  return lines.join("\n");
}

/** unquoteUsage takes the first `back-quoted` word of a help text as the value's name, as Go's flag.UnquoteUsage does. */
function unquoteUsage(help: string, typeName: string): { valueName: string; help: string } {
  // \x60 is the back quote, spelled out so that no tool reading this file takes it for a template string.
  const match = /\x60([^\x60]*)\x60/.exec(help);
  if (!match) return { valueName: typeName, help };
  return { valueName: match[1] ?? "", help: help.replace(match[0], match[1] ?? "") };
}
