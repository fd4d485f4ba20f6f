/**
 * Builds the floor programs (bench/floor/) with scripts/build.ts, the one
 * place the compile flags live, so that the runtime under them and under
 * ours is the same (ATTACHER_EXEC_ARGV included).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** FloorBinaries are the two compiled floor programs. */
export interface FloorBinaries {
  /** Floor (a): one request to kube-apiserver over TLS, one HTTP/2 connection to the driver, idle. */
  readonly loadOnly: string;
  /** Floor (b): the bare client doing an attacher's writes and CSI calls. */
  readonly bareAttacher: string;
}

const repoRoot = resolve(import.meta.dir, "../..");

/** buildFloor compiles both programs into a fresh temporary directory. */
export function buildFloor(): FloorBinaries {
  const dir = mkdtempSync(join(tmpdir(), "bench-floor-"));
  const build = (name: string) => {
    const outfile = join(dir, name);
    const out = Bun.spawnSync([process.execPath, "run", "scripts/build.ts", `--entry=bench/floor/${name}.ts`], {
      cwd: repoRoot,
      env: { ...process.env, ATTACHER_OUTFILE: outfile },
      stdout: "pipe",
      stderr: "pipe",
    });
    if (out.exitCode !== 0) throw new Error(`building bench/floor/${name}.ts exited with ${out.exitCode}: ${out.stderr.toString()}`);
    return outfile;
  };
  return { loadOnly: build("load-only"), bareAttacher: build("bare-attacher") };
}
