/**
 * FlagError is a bad command line: it names the flag, the value given and
 * what would have been accepted, in one line, because that line is all an
 * operator sees in `kubectl logs` of a crash-looping sidecar.
 */
export class FlagError extends Error {
  override name = "FlagError";
  readonly flag: string;

  constructor(flag: string, message: string) {
    super(`invalid flag --${flag}: ${message}`);
    this.flag = flag;
  }
}
