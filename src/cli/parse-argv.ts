import { FlagError } from "./errors";
import { flagsByName } from "./flag-table";

/**
 * parseArgv splits a command line into raw flag values the way Go's pflag
 * does for the forms operators use: `--flag=value`, `--flag value`,
 * `-flag=value`, `-v 5`, and a bare boolean `--flag` meaning true (a boolean
 * never swallows the next argument, as in Go). Unknown flags and positional
 * arguments are errors, like upstream's flag.Parse exiting with usage.
 */
export function parseArgv(argv: readonly string[]): Map<string, string> {
  const values = new Map<string, string>();
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index] ?? "";
    if (!argument.startsWith("-") || argument === "-" || argument === "--") {
      throw new FlagError(argument, `unexpected argument ${JSON.stringify(argument)}; every setting is a --flag`);
    }
    const body = argument.replace(/^--?/, "");
    const equals = body.indexOf("=");
    const name = equals === -1 ? body : body.slice(0, equals);
    const definition = flagsByName.get(name);
    if (!definition) throw new FlagError(name, "unknown flag");
    if (equals !== -1) {
      values.set(name, body.slice(equals + 1));
    } else if (definition.kind === "bool") {
      values.set(name, "true");
    } else {
      const next = argv[index + 1];
      if (next === undefined) throw new FlagError(name, "flag needs an argument");
      values.set(name, next);
      index++;
    }
  }
  return values;
}
