/**
 * The attacher runs with JavaScriptCore's optimizing tiers, DFG and FTL, off
 * by default: for bursts of the size an attacher sees (tens to thousands of
 * VolumeAttachments) they cost more memory and CPU than they give back
 * (issue 24: the smallest container limit that held at 30 VAs fell from 88 to
 * 72 MiB). The LLInt and Baseline JIT stay on.
 *
 * Bun reads JSC's options only from `BUN_JSC_*` in the environment, once,
 * before the VM exists: no build flag, bunfig key or run-time API sets them.
 * So when the environment does not name them, the process executes itself
 * again, once, with them set: same PID (a container's PID 1 stays PID 1),
 * same arguments, ~5 ms. Every way of running it gets the same tiers: the
 * image, the Deployment, the binary on a laptop, the tests and the bench. An
 * operator who sets either variable decides that tier; the other keeps our
 * default. The new image has both set, so it never executes itself again.
 *
 * This module's body runs on import, first of all of main.ts's imports, so
 * that nothing else is evaluated in the image that is about to be replaced.
 */
import { readFileSync } from "node:fs";

/** Our default JSC options; an operator's value in the environment wins over each. */
export const defaultJscOptions: Readonly<Record<string, string>> = {
  BUN_JSC_useDFGJIT: "0",
  BUN_JSC_useFTLJIT: "0",
};

/**
 * missingJscOptions are the default options that `env` does not set, to be
 * added before the VM starts. Empty when the environment names all of them
 * (the operator's choice, or the image this function already re-executed).
 */
export function missingJscOptions(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const missing: Record<string, string> = {};
  for (const [name, value] of Object.entries(defaultJscOptions)) {
    if (env[name] === undefined) missing[name] = value;
  }
  return missing;
}

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
    // No /proc (not Linux, or a sandbox without it): stay in this image with the tiers it has.
    if (e instanceof Error && "code" in e) return undefined;
    throw e;
  }
  const argv = raw.split("\0");
  // Each argument ends with a NUL, so the split leaves one empty string at the end.
  if (argv.at(-1) === "") argv.pop();
  return argv.length === 0 ? undefined : argv;
}

function reexecWithDefaultJitTiers(): void {
  const missing = missingJscOptions(process.env);
  if (Object.keys(missing).length === 0) return;
  const argv = ownCommandLine();
  // Node.js typings make execve optional (it is missing on Windows); Bun has it.
  const execve = process.execve;
  if (argv === undefined || execve === undefined) return;
  try {
    // On success this does not return: the new image starts from main again.
    execve(process.execPath, argv, { ...process.env, ...missing });
  } catch (e: unknown) {
    // The executable cannot be run again (replaced on disk, a seccomp policy):
    // the attacher works on every tier, only heavier, so it goes on in this image.
    process.stderr.write(`Running with JavaScriptCore's default JIT tiers: re-executing with ${Object.keys(missing).join(", ")} failed: ${e instanceof Error ? e.message : String(e)}\n`);
  }
}

reexecWithDefaultJitTiers();
