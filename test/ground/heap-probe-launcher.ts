import { chmodSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

const repoRoot = resolve(import.meta.dir, "../..");

/**
 * writeHeapProbeLauncher writes an executable script at `path` that starts
 * the attacher with heap-probe-preload.ts writing to `out`: from source under
 * `bun --preload` by default, or `binary` (one built with the probe in).
 * The script execs, so its pid is the attacher's and SIGUSR2 reaches it.
 * The memory probe and the soak both launch the attacher through it.
 */
export function writeHeapProbeLauncher(path: string, out: string, binary?: string): void {
  const command =
    binary !== undefined
      ? resolve(binary)
      : `${join(repoRoot, "node_modules/.bin/bun")} --preload=${join(repoRoot, "test/ground/heap-probe-preload.ts")} ${join(repoRoot, "src/entry.ts")}`;
  writeFileSync(path, `#!/bin/sh\nHEAP_PROBE_OUT=${out} exec ${command} "$@"\n`);
  chmodSync(path, 0o755);
}
