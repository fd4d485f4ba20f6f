import { parseConfig, type Config } from "../cli/config";
import { FlagError } from "../cli/errors";
import { usage } from "../cli/usage";
import { versionLine } from "../cli/version";

export interface CommandLineOptions {
  /** The arguments after the program's name. */
  readonly argv: readonly string[];
  /** Where --help and --version print. */
  readonly out: (text: string) => void;
  /** Where a bad flag is reported. */
  readonly err: (text: string) => void;
}

/** What the command line asks for: run with `config`, or exit at once with `exitCode`. */
export type CommandLine = { readonly config: Config } | { readonly exitCode: number };

/**
 * readCommandLine parses the flags. A bad flag, --help and --version end
 * the program before anything starts: each prints its line and names the
 * exit code (Go's flag package exits 2 on a flag it cannot parse).
 */
export function readCommandLine(options: CommandLineOptions): CommandLine {
  let config: Config;
  try {
    config = parseConfig(options.argv);
  } catch (e: unknown) {
    if (!(e instanceof FlagError)) throw e;
    options.err(`${e.message}\n`);
    return { exitCode: e.exitCode };
  }
  if (config.showHelp) {
    options.out(`${usage()}\n`);
    return { exitCode: 0 };
  }
  if (config.showVersion) {
    options.out(`${versionLine()}\n`);
    return { exitCode: 0 };
  }
  return { config };
}
