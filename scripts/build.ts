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
 * `--target=linux/arm64` (or linux/amd64) cross-compiles for that platform
 * into dist/csi-attacher-<arch>, from the Bun runtime of that CPU that
 * package-lock.json pins (scripts/build/target-runtime.ts fetches it from
 * the npm registry once and checks it).
 *
 *   bun run build                      # dist/csi-attacher, for this machine's CPU
 *   bun run build --target=linux/arm64 # dist/csi-attacher-arm64
 *   bun run build --no-bytecode        # without precompiled bytecode (for comparing)
 *   bun run build --profiling          # names and lines kept (bench/jit-profile.ts maps JIT code to modules)
 *   bun run build --entry=bench/floor/load-only.ts  # another program, with the same flags (the bench's floor)
 *
 * ATTACHER_EXEC_ARGV bakes runtime arguments into the binary
 * (`--compile-exec-argv`, e.g. "--smol"), for A/B comparisons of runtime
 * levers; a space-separated list, none by default (no lever measured better).
 * ATTACHER_OUTFILE names the output file.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { $ } from "bun";
import { defaultOutfile, hostTarget, targetFor, type BuildTarget } from "./build/build-targets";
import { BuildError } from "./build/errors";
import { logCallSitePlugin } from "./build/log-call-site-plugin";
import { targetRuntime } from "./build/target-runtime";

/** The --target=PLATFORM flag; `bun run build -- --target=...` passes a bare "--" first. */
const targetFlag = process.argv.find((arg) => arg.startsWith("--target="))?.slice("--target=".length);
let target: BuildTarget | undefined;
try {
  target = targetFlag === undefined || targetFlag === "" ? undefined : targetFor(targetFlag);
} catch (e: unknown) {
  if (!(e instanceof BuildError)) throw e;
  console.error(`bun run build: ${e.message}`);
  process.exit(2);
}
const outfile = process.env["ATTACHER_OUTFILE"] ?? defaultOutfile(target);
/** The program to compile: the attacher unless --entry names another (the bench's floor programs). */
const entry = process.argv.find((arg) => arg.startsWith("--entry="))?.slice("--entry=".length) ?? "src/entry.ts";
const compileExecArgv = (process.env["ATTACHER_EXEC_ARGV"] ?? "").split(" ").filter((arg) => arg !== "");
const bytecode = !process.argv.includes("--no-bytecode");
// --profiling minifies the syntax only: the functions keep their names and the
// bundle its lines, each module's code after a comment naming it, which is how
// a JIT dump's source lines are told apart by module (bench/lib/bundled-modules.ts).
const profiling = process.argv.includes("--profiling");

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

/**
 * crossCompile is what makes a binary for `target`: nothing for this
 * machine's own CPU (Bun copies itself), else the target and the checked
 * runtime of that CPU.
 */
async function crossCompile(target: BuildTarget | undefined): Promise<{ target: Bun.Build.CompileTarget; executablePath: string } | undefined> {
  if (target === undefined || target === hostTarget()) return undefined;
  try {
    return { target: target.bunTarget, executablePath: await targetRuntime(target, readFileSync("package-lock.json", "utf8")) };
  } catch (e: unknown) {
    if (!(e instanceof BuildError)) throw e;
    console.error(`bun run build: ${e.message}`);
    process.exit(1);
  }
}

const started = performance.now();
const commit = await gitCommit();
const cross = await crossCompile(target);
// The bundler's API, not the `bun build` command: only the API takes a
// plugin, and one gives every logger call its file and line (scripts/build/log-call-sites.ts).
// A compiled Bun program reads a .env and a bunfig.toml from its working
// directory at start unless built not to: the first set variables (a
// BUN_JSC_* option among them) and the second could preload any JavaScript
// beside it. Upstream's attacher reads neither; ours runs with its pod's
// environment and its own code only (test/e2e/startup.test.ts).
// ESM with splitting puts what only a dynamic import() reaches (client-node
// behind a kubeconfig with plugins, prom-client and the HTTP server behind
// --http-endpoint) into chunks of their own that load when imported. As one
// CommonJS program, every function declaration of those modules was linked
// at start although their bodies never ran: 1.4 MiB more live JS heap and
// ~2.4 MiB more anonymous memory at idle (issue 13).
// The linked source map is embedded in the binary, so stack traces name
// source files, not the minified bundle; the .map files written beside it
// are not needed.
let result: Bun.BuildOutput;
try {
  result = await Bun.build({
    entrypoints: [entry],
    target: "bun",
    format: "esm",
    splitting: true,
    naming: { chunk: "[name]-[hash].[ext]" },
    minify: profiling ? { syntax: true } : true,
    sourcemap: "linked",
    bytecode,
    define: { CSI_ATTACHER_GIT_COMMIT: JSON.stringify(commit) },
    plugins: [logCallSitePlugin(resolve("."), entry)],
    compile: {
      outfile,
      autoloadDotenv: false,
      autoloadBunfig: false,
      ...(cross ?? {}),
      ...(compileExecArgv.length > 0 ? { execArgv: compileExecArgv } : {}),
    },
    throw: false,
  });
} catch (e: unknown) {
  if (!(e instanceof BuildError)) throw e;
  console.error(`bun run build: ${e.message}`);
  process.exit(1);
}
if (!result.success) {
  for (const log of result.logs) console.error(String(log));
  console.error(`bun run build: bundling ${entry} failed`);
  process.exit(1);
}
const size = Bun.file(outfile).size;
console.log(`built ${outfile} (${(size / 1024 / 1024).toFixed(1)} MiB, ${(target ?? hostTarget())?.platform ?? process.arch}, commit ${commit}${bytecode ? ", bytecode" : ""}${profiling ? ", for profiling" : ""}${compileExecArgv.length > 0 ? `, exec argv ${compileExecArgv.join(" ")}` : ""}) in ${Math.round(performance.now() - started)} ms`);
