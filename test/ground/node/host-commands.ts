/** Host commands the node ground runs (ip, iptables, ctr, umount), with their output kept for the error. */

export interface RunOptions {
  /** Return the result instead of throwing on a non-zero exit. Default false. */
  readonly allowFailure?: boolean;
}

export interface RunResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** run runs `command` to completion; a failure throws with its stderr unless allowed. */
export function run(command: readonly string[], options: RunOptions = {}): RunResult {
  const result = Bun.spawnSync([...command], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const outcome = { exitCode: result.exitCode ?? -1, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
  if (outcome.exitCode !== 0 && options.allowFailure !== true) {
    throw new Error(`${command.join(" ")} exited ${outcome.exitCode}: ${outcome.stderr.trim() || outcome.stdout.trim()}`);
  }
  return outcome;
}
