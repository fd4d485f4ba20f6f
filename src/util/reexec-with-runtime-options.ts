/**
 * Starts the attacher with its runtime options (runtime-start-options.ts).
 * Bun reads them only from the environment at process start, so when the
 * environment lacks any, the process executes itself again, once, with them
 * added: same PID (a container's PID 1 stays PID 1, and main.ts registers
 * its signal handlers in the new image), same arguments, ~10-30 ms. Every
 * way of running it gets the same options: the image, the Deployment, the
 * binary on a laptop, the tests and the bench. The new image has them all
 * set, so it never executes itself again.
 *
 * This module's body runs on import, the one static import of entry.ts,
 * which loads the attacher only afterwards: little else is evaluated in the
 * image that is about to be replaced.
 */
import { readFileSync } from "node:fs";
import { totalmem } from "node:os";
import { readOwnMemoryLimit } from "./cgroup-memory-limit";
import { runtimeOptionsToAdd } from "./runtime-start-options";

/**
 * ownCommandLine is the argv this process was executed with, bun's own flags
 * (`bun --smol run x.ts`) and a compiled binary's arguments alike, read from
 * /proc/self/cmdline; undefined off Linux or without /proc.
 */
function ownCommandLine(): string[] | undefined {
  let raw: string;
  try {
    raw = readFileSync("/proc/self/cmdline", "utf8");
  } catch (e: unknown) {
    // No /proc (not Linux, or a sandbox without it): stay in this image with the options it has.
    if (e instanceof Error && "code" in e) return undefined;
    throw e;
  }
  const argv = raw.split("\0");
  // Each argument ends with a NUL, so the split leaves one empty string at the end.
  if (argv.at(-1) === "") argv.pop();
  return argv.length === 0 ? undefined : argv;
}

function reexecWithJscOptions(): void {
  // Bun answers its cgroup's limit or the machine's RAM; Node.js's 0 for "no constraint" is read as the latter.
  const constrained = process.constrainedMemory();
  const add = runtimeOptionsToAdd(process.env, { limitBytes: readOwnMemoryLimit()?.limitBytes, runtimeRamBytes: constrained > 0 ? constrained : totalmem() });
  if (Object.keys(add).length === 0) return;
  const argv = ownCommandLine();
  // Node.js typings make execve optional (it is missing on Windows); Bun has it.
  const execve = process.execve;
  if (argv === undefined || execve === undefined) return;
  try {
    // On success this does not return: the new image starts from main again.
    execve(process.execPath, argv, { ...process.env, ...add });
  } catch (e: unknown) {
    // The executable cannot be run again (replaced on disk, a seccomp policy):
    // the attacher works with JSC's defaults, only heavier, so it goes on in this image.
    process.stderr.write(`Running with the runtime's default options: re-executing with ${Object.keys(add).join(", ")} failed: ${e instanceof Error ? e.message : String(e)}\n`);
  }
}

reexecWithJscOptions();
