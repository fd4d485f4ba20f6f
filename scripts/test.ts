/**
 * test runs everything that must hold before a change lands, in the order
 * that fails fastest: types (checked beside the next steps), generated
 * code, the Go-built test ground, the binary, unit tests, then end-to-end
 * tests of that binary against a real kube-apiserver and real CSI drivers.
 * `bun run test` is the one test command; .ci/run calls it too.
 *
 * Test timeouts are passed here because bunfig.toml's are ignored
 * (oven-sh/bun#7789). It closes with a "N passed, N failed" line.
 */
import { $ } from "bun";
import { crossTargets, defaultOutfile } from "./build/build-targets";
import { driverKinds } from "../test/chaos/invariants";
import { longestFirst } from "./test/e2e-file-order";

interface Counts {
  passed: number;
  failed: number;
}

const total: Counts = { passed: 0, failed: 0 };

async function step(name: string, run: () => Promise<void>): Promise<void> {
  const started = performance.now();
  console.log(`\n=== ${name}`);
  await run();
  console.log(`=== ${name}: done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

/**
 * Runs bun test on `paths` (only the tests whose names contain `testName`,
 * when given) and counts its results. With `streaming` the report goes out
 * as it comes; otherwise it is printed whole at the end, so that runs side
 * by side do not interleave their lines.
 */
async function bunTest(timeoutMs: number, paths: readonly string[], streaming = true, testName?: string): Promise<void> {
  const nameFilter = testName === undefined ? [] : ["--test-name-pattern", testName];
  const child = Bun.spawn(["bun", "test", "--timeout", String(timeoutMs), ...nameFilter, ...paths], { stdout: "pipe", stderr: "pipe" });
  let report = "";
  const decoder = new TextDecoder();
  const collect = async (stream: ReadableStream<Uint8Array>, sink: NodeJS.WriteStream) => {
    for await (const chunk of stream) {
      const text = decoder.decode(chunk, { stream: true });
      report += text;
      if (streaming) sink.write(text);
    }
  };
  await Promise.all([collect(child.stdout, process.stdout), collect(child.stderr, process.stderr)]);
  const code = await child.exited;
  if (!streaming) process.stderr.write(report);
  const passed = Number(/^\s*(\d+) pass$/m.exec(report)?.[1] ?? 0);
  const failed = Number(/^\s*(\d+) fail$/m.exec(report)?.[1] ?? 0);
  total.passed += passed;
  total.failed += failed;
  // A crash or a file that failed to load is a failure even with no failed test.
  if (code !== 0 && failed === 0) total.failed += 1;
}

/**
 * Runs each test file under `dir` in a bun test process of its own,
 * `atOnce` processes at a time: whenever one ends, the next file starts,
 * longest expected first (see e2e-file-order.ts). End-to-end tests spend
 * most of their time waiting (for back-off, leases, watches, alerts), not
 * computing, so running several cuts the wall time even on two cores.
 * Each file starts its own cluster, so they share nothing. A file's
 * report is printed whole when it ends (streamed when one runs at a time).
 *
 * A file is not dealt to a fixed shard ahead of time: its time varies
 * from run to run with the others' load, and with fixed shards the run
 * waited for the unluckiest one (shards ended at 250-323 s in one run).
 */
async function bunTestEachFile(timeoutMs: number, dir: string, atOnce: number): Promise<void> {
  const waiting = longestFirst([...new Bun.Glob(`${dir}/**/*.test.ts`).scanSync(".")]);
  const lanes = Math.min(atOnce, waiting.length);
  const lane = async () => {
    for (let file = waiting.shift(); file !== undefined; file = waiting.shift()) await bunTest(timeoutMs, [file], lanes === 1);
  };
  await Promise.all(Array.from({ length: lanes }, lane));
}

// E2E_FILES_AT_ONCE=1 runs them one file after another, with the report streamed.
const e2eFilesAtOnce = Number(process.env["E2E_FILES_AT_ONCE"] ?? 4);
// Read first: a value that is no count would start no file at all, and the run would pass with none run.
if (!Number.isInteger(e2eFilesAtOnce) || e2eFilesAtOnce < 1) throw new Error(`E2E_FILES_AT_ONCE must be a whole number of files, at least 1; got ${JSON.stringify(process.env["E2E_FILES_AT_ONCE"])}`);

// The typecheck runs beside the steps up to the unit tests (it is ~20 s of
// one core, and they mostly wait on the disk or use one core too), and is
// judged before the unit tests: a type error still stops the run before
// any test. A shell command starts only once something awaits it: the
// async function does, now.
const startTypecheck = async () => await $`tsc --noEmit -p tsconfig.json`.nothrow().quiet();
const typecheck = startTypecheck();
await step("generated code is current", async () => {
  await $`bun run scripts/check-gen.ts`;
});
await step("test ground components (Go, cached by version; the first build takes minutes)", async () => {
  // Quiet on success: a cold build prints hundreds of module downloads.
  const build = await $`bash test/ground/build-components.sh`.nothrow().quiet();
  if (build.exitCode !== 0) {
    process.stderr.write(build.stderr);
    throw new Error(`building the test ground failed (exit ${build.exitCode})`);
  }
});
await step("binary", async () => {
  await $`bun run scripts/build.ts`;
});
// The other CPU's binary (dist/csi-attacher-arm64 on amd64), cross-compiled:
// the image's second platform, and what test/e2e/arm64-emulated runs under QEMU.
const crossCompiled = crossTargets();
await step(`cross-compiled binaries (${crossCompiled.map((target) => target.platform).join(", ")})`, async () => {
  for (const target of crossCompiled) await $`bun run scripts/build.ts --target=${target.platform}`;
});
// The multi-platform sidecar image, without a container engine
// (dist/csi-attacher-image.tar); the end-to-end tests build their own
// copies and run this machine's platform under runc.
await step("image", async () => {
  const crossBinaries = crossCompiled.map((target) => `--binary-${target.architecture}=${defaultOutfile(target)}`);
  await $`bun run scripts/image.ts --binary=dist/csi-attacher ${crossBinaries}`;
});
await step("typecheck (run beside the steps above)", async () => {
  const result = await typecheck;
  if (result.exitCode === 0) return;
  process.stderr.write(result.stdout);
  process.stderr.write(result.stderr);
  throw new Error(`tsc found type errors (exit ${result.exitCode})`);
});
await step("unit tests", () => bunTest(30_000, ["test/unit", "bench/test"]));
await step(`end-to-end tests (${e2eFilesAtOnce} files at once)`, () => bunTestEachFile(180_000, "test/e2e", e2eFilesAtOnce));
// The chaos runs at CI size, after the end-to-end files: their faults
// (SIGKILLs, compaction, driver restarts) would starve those files'
// time-bounded waits.
// The three run side by side, each in its own bun test process: alone, one
// keeps a core about half busy, mostly waiting out its faults (a Lease's
// expiry, a driver's restart), and their invariants bound no time (a fault
// waits up to 30 s, the settling 180 s), so together they take the longest
// one's ~2 minutes instead of ~3.5 one after another.
// The leader-election file runs once per driver kind, picked by its
// describe title ("... and a blind driver"); a title that no longer
// matches fails the run (bun test exits 1 when a pattern matches nothing).
const chaosRuns: readonly { file: string; testName?: string }[] = [
  { file: "test/chaos/chaos-ci.test.ts" },
  ...driverKinds.map((kind) => ({ file: "test/chaos/chaos-leader-ci.test.ts", testName: `a ${kind} driver` })),
];
await step("chaos runs (CI size: one attacher; two replicas under leader election with a blind, then a listing driver)", async () => {
  await Promise.all(chaosRuns.map((run) => bunTest(600_000, [run.file], false, run.testName)));
});

console.log(`\ntests: ${total.passed} passed, ${total.failed} failed`);
process.exit(total.failed > 0 ? 1 : 0);
