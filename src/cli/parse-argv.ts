import { FlagError } from "./errors";
import type { SomeFlag } from "./flag-definition";

/** FlagOccurrence is one flag as it appeared on the command line, its value still text. */
export interface FlagOccurrence {
  readonly flag: SomeFlag;
  readonly text: string;
}

/**
 * parseArgv splits a command line the way Go's flag package does, because
 * upstream's Deployments were written for it: `-flag` and `--flag` alike,
 * `--flag=value` or `--flag value`; a boolean is true when bare, takes a
 * value only after `=`, and never swallows the next argument; any other flag
 * takes the next argument whatever it looks like. Unlike Go, an argument that
 * is not a flag is an error instead of silently ending the flags (everything
 * after it would be ignored), and so is anything after `--`.
 *
 * `byName` is the table the command line is read against (indexFlagsByName):
 * the attacher's, or a subcommand's with flags of its own (the doctor), so
 * both follow the same argv rules.
 */
export function parseArgv(argv: readonly string[], byName: ReadonlyMap<string, SomeFlag>): FlagOccurrence[] {
  const occurrences: FlagOccurrence[] = [];
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index] ?? "";
    if (!argument.startsWith("-") || argument === "-") {
      throw FlagError.strayArgument(argument);
    }
    if (argument === "--") {
      const rest = argv[index + 1];
      if (rest !== undefined) throw FlagError.strayArgument(rest);
      break;
    }
    const body = argument.startsWith("--") ? argument.slice(2) : argument.slice(1);
    if (body === "" || body.startsWith("-") || body.startsWith("=")) throw FlagError.badSyntax(argument);
    const equals = body.indexOf("=");
    const name = equals === -1 ? body : body.slice(0, equals);
    const flag = byName.get(name);
    if (!flag) throw FlagError.unknownFlag(name);
    if (equals !== -1) {
      occurrences.push({ flag, text: body.slice(equals + 1) });
    } else if (flag.kind.isBool) {
      occurrences.push({ flag, text: "true" });
    } else {
      const next = argv[index + 1];
      if (next === undefined) throw FlagError.missingArgument(name);
      occurrences.push({ flag, text: next });
      index++;
    }
  }
  return occurrences;
}
