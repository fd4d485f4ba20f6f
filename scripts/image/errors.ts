/**
 * ImageBuildError is a failure of `bun run image` that the operator can act
 * on: its message says what failed and what to do about it, because that
 * message is all a CI log shows.
 */
export class ImageBuildError extends Error {
  override name = "ImageBuildError";
}

/**
 * PinError is a Debian package that cannot be had as pinned in
 * deploy/image/base-packages.lock.json: no pin for this architecture, a
 * version the archive no longer serves, or a checksum that differs.
 */
export class PinError extends ImageBuildError {
  override name = "PinError";
  /** The package, as Debian names it. */
  readonly packageName: string;

  constructor(packageName: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.packageName = packageName;
  }
}

/** ToolError is a command of the build that exited non-zero; its stderr is kept. */
export class ToolError extends ImageBuildError {
  override name = "ToolError";
  /** The command line, for the message. */
  readonly command: readonly string[];
  readonly exitCode: number;
  readonly stderr: string;

  constructor(command: readonly string[], exitCode: number, stderr: string) {
    super(`${command.join(" ")} exited ${exitCode}: ${stderr.trim()}`);
    this.command = command;
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}
