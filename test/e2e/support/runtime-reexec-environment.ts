import { runtimeOptionsToAdd } from "../../../src/util/runtime-start-options";

/**
 * runtimeReexecEnvironment is what the attacher adds to an environment that
 * names none of its runtime options when it executes itself again at
 * start (src/util/reexec-with-runtime-options.ts), as `NAME=value` entries: the
 * tests that read a running attacher's /proc/PID/environ expect them beside
 * what they passed. No limit binds above the process's own cgroup in those
 * tests, so no RAM size is added.
 */
export function runtimeReexecEnvironment(): string[] {
  return Object.entries(runtimeOptionsToAdd({}, { limitBytes: undefined, runtimeRamBytes: 0 })).map(([name, value]) => `${name}=${value}`);
}
