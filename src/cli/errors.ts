/**
 * FlagError is a bad command line: one line naming the flag, the value given
 * and what would have been accepted, because that line is all an operator
 * sees in `kubectl logs` of a crash-looping sidecar.
 *
 * `exitCode` follows upstream: Go's flag package exits 2 when it cannot parse
 * the command line (an unknown flag, a value that is not of the flag's type),
 * while the checks upstream's main() makes afterwards (worker threads,
 * feature gates, logging options, both HTTP flags) exit 1.
 */
export class FlagError extends Error {
  override name = "FlagError";
  /** The flag as the operator would spell it, without dashes. */
  readonly flag: string;
  readonly exitCode: 1 | 2;

  private constructor(flag: string, message: string, exitCode: 1 | 2) {
    super(message);
    this.flag = flag;
    this.exitCode = exitCode;
  }

  /** unreadable: the text is not of the flag's type (Go's flag.Value.Set failed). */
  static unreadable(flag: string, text: string, reason: string): FlagError {
    return new FlagError(flag, `invalid value ${JSON.stringify(text)} for flag --${flag}: ${reason}`, 2);
  }

  /** unacceptable: the value reads fine but is outside what the attacher accepts. */
  static unacceptable(flag: string, text: string, reason: string): FlagError {
    return new FlagError(flag, `invalid value ${JSON.stringify(text)} for flag --${flag}: ${reason}`, 1);
  }

  /** conflict: two flags that exclude each other were both given. */
  static conflict(flag: string, text: string, other: string, otherText: string): FlagError {
    return new FlagError(flag, `only one of --${other} (${JSON.stringify(otherText)}) and --${flag} (${JSON.stringify(text)}) can be set`, 1);
  }

  static unknownFlag(flag: string): FlagError {
    return new FlagError(flag, `flag provided but not defined: --${flag} (--help lists the flags)`, 2);
  }

  static missingArgument(flag: string): FlagError {
    return new FlagError(flag, `flag needs an argument: --${flag}`, 2);
  }

  static badSyntax(argument: string): FlagError {
    return new FlagError(argument, `bad flag syntax: ${argument}`, 2);
  }

  static strayArgument(argument: string): FlagError {
    return new FlagError(argument, `unexpected argument ${JSON.stringify(argument)}: every setting is a --flag, and a boolean takes its value as --flag=false`, 2);
  }
}
