import { ToolError } from "./errors";

/** Options of {@link runTool}. */
export interface RunToolOptions {
  /** Working directory; default the current one. */
  readonly cwd?: string;
  /** Extra environment on top of this process's. */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * runTool runs one command of the image build to completion and returns its
 * stdout, or throws a ToolError carrying its stderr. Commands are argument
 * vectors, never shell lines: paths and versions hold characters (`+`, `~`)
 * a shell line would have to quote.
 */
export function runTool(command: readonly string[], options: RunToolOptions = {}): string {
  const run = Bun.spawnSync([...command], {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    env: { ...process.env, ...options.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  if (run.exitCode !== 0) throw new ToolError(command, run.exitCode ?? -1, run.stderr.toString());
  return run.stdout.toString();
}
