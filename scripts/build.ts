/**
 * build compiles the attacher into one self-contained binary,
 * dist/csi-attacher, which is what the end-to-end tests and the image run.
 *
 * The git commit is embedded at build time (`--define`), so `--version`
 * names the exact source; a tree with uncommitted changes says "-dirty", a
 * build outside a git checkout (an unpacked tarball) says "outside-git".
 * GIT_COMMIT in the environment overrides it: an image build, whose context
 * carries no .git, passes it as a build argument.
 *
 * With bytecode, scripts/bytecode-order.txt (a recorded cold start, see
 * scripts/record-bytecode-order.ts) orders it, if the file is there.
 *
 *   bun run build                      # dist/csi-attacher
 *   bun run build --no-bytecode        # without precompiled bytecode (for comparing)
 *   bun run build --no-bytecode-order  # bytecode in Bun's own order (for comparing)
 */
import { existsSync } from "node:fs";
import { $ } from "bun";
import { compileExecArgv, compileExecArgvFlags } from "./compile-exec-argv";

const outfile = process.env["ATTACHER_OUTFILE"] ?? "dist/csi-attacher";
const bytecode = !process.argv.includes("--no-bytecode");
const bytecodeOrderFile = "scripts/bytecode-order.txt";
const bytecodeOrder = bytecode && !process.argv.includes("--no-bytecode-order") && existsSync(bytecodeOrderFile);

/** gitCommit is the short HEAD hash, "-dirty" if the tree has changes, or "outside-git". */
async function gitCommit(): Promise<string> {
  const given = process.env["GIT_COMMIT"];
  if (given !== undefined && given !== "") return given;
  const head = await $`git rev-parse --short=12 HEAD`.nothrow().quiet();
  if (head.exitCode !== 0) return "outside-git";
  const status = await $`git status --porcelain --untracked-files=no`.nothrow().quiet();
  const dirty = status.exitCode === 0 && status.stdout.toString().trim() !== "";
  return `${head.stdout.toString().trim()}${dirty ? "-dirty" : ""}`;
}

const started = performance.now();
const commit = await gitCommit();
// --sourcemap embeds the source map in the binary, so stack traces (and with
// them the file:line of each klog-style log line) name source files, not the
// minified bundle. The .map file written beside the binary is not needed.
const flags = ["--compile", "--minify", "--sourcemap=linked", `--define=CSI_ATTACHER_GIT_COMMIT=${JSON.stringify(commit)}`, ...(bytecode ? ["--bytecode"] : []), ...(bytecodeOrder ? [`--bytecode-order=${bytecodeOrderFile}`] : []), ...compileExecArgvFlags()];
await $`bun build ${flags} src/main.ts --outfile ${outfile}`.quiet();
const size = Bun.file(outfile).size;
console.log(`built ${outfile} (${(size / 1024 / 1024).toFixed(1)} MiB, commit ${commit}${bytecode ? ", bytecode" : ""}${bytecodeOrder ? " in recorded order" : ""}${compileExecArgv.length > 0 ? `, exec argv ${compileExecArgv.join(" ")}` : ""}) in ${Math.round(performance.now() - started)} ms`);
