import type { LogFields } from "../log/logger";

/**
 * StartupFailure is a start-up step that cannot go on: the attacher logs
 * `message` with `fields` and the cause beside them, and exits 1, as
 * upstream's main() does with klog.Fatal / os.Exit(1). The step that fails
 * knows what to say; main.ts alone logs it and decides the exit code.
 */
export class StartupFailure extends Error {
  override name = "StartupFailure";
  /** What the log line carries beside the error: the flags that led to it. */
  readonly fields: LogFields;

  constructor(message: string, fields: LogFields, options: { readonly cause: unknown }) {
    super(message, options);
    this.fields = fields;
  }
}

/** DriverStartupError is the CSI driver answering wrongly at start-up: upstream exits non-zero on each of these. */
export class DriverStartupError extends Error {
  override name = "DriverStartupError";
}
