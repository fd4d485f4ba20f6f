/**
 * Builds the floor programs (bench/floor/) the way scripts/build.ts builds
 * ours, `bun build --compile --minify --bytecode` with the same baked-in
 * runtime arguments, so that the runtime under both is the same.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { compileExecArgvFlags } from "../../scripts/compile-exec-argv.ts";

/** FloorBinaries are the two compiled floor programs. */
export interface FloorBinaries {
  /** Floor (a): one fetch over TLS, one node:http2 session, idle. */
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
    const flags = ["--compile", "--minify", "--bytecode", ...compileExecArgvFlags()];
    const out = Bun.spawnSync([process.execPath, "build", ...flags, join(repoRoot, "bench/floor", `${name}.ts`), "--outfile", outfile], { cwd: repoRoot, stdout: "pipe", stderr: "pipe" });
    if (out.exitCode !== 0) throw new Error(`bun build of bench/floor/${name}.ts exited with ${out.exitCode}: ${out.stderr.toString()}`);
    return outfile;
  };
  return { loadOnly: build("load-only"), bareAttacher: build("bare-attacher") };
}
