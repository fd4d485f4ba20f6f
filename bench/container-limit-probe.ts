/**
 * container-limit-probe runs the container-limit scenario for several builds
 * of ours (and optionally Go), A B C A B C on one ground, to decide which
 * memory lever to keep; `bun run bench` stays the report of record.
 *
 *   bun run bench/container-limit-probe.ts --volumes 300 --rounds 3 \
 *     --bin plain=/tmp/plain --bin smol=dist/csi-attacher [--go] [--step 8]
 *
 * With --limit MiB --deadline-ms MS each round runs one cycle per build at
 * that fixed limit instead of the walk: near the cliff where "holds" turns
 * to "crawls", several such cycles tell two builds apart better than walks.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { ensureComponents } from "../test/cluster/components.ts";
import type { AttacherBinary } from "./lib/attacher-under-test.ts";
import { BenchContext, round3 } from "./lib/bench-context.ts";
import { startBenchGround } from "./lib/bench-ground.ts";
import { buildGoAttacher } from "./lib/go-attacher-build.ts";
import { median } from "./lib/stats.ts";
import { VaWatch } from "./lib/va-watch.ts";
import { runContainerLimit, runCycle } from "./scenarios/container-limit.ts";

const { values: opts } = parseArgs({
  options: {
    volumes: { type: "string", default: "300" },
    rounds: { type: "string", default: "2" },
    workers: { type: "string", default: "10" },
    step: { type: "string", default: "8" },
    bin: { type: "string", multiple: true, default: [] },
    go: { type: "boolean", default: false },
    limit: { type: "string" },
    "deadline-ms": { type: "string", default: "30000" },
  },
  strict: true,
});
const params = { volumes: Number(opts.volumes), workers: Number(opts.workers), qps: 1000, burst: 2000, stepMiB: Number(opts.step) };
const entries: { name: string; binary: AttacherBinary }[] = opts.bin.map((spec) => {
  const [name, path] = spec.split("=");
  if (name === undefined || path === undefined || !existsSync(path)) throw new Error(`--bin ${spec}: want name=existing-path`);
  return { name, binary: { kind: "ours", path: resolve(path) } };
});
if (opts.go) entries.push({ name: "go", binary: { kind: "go", path: buildGoAttacher() } });

await ensureComponents();
const ground = await startBenchGround("fake", 0, "");
const watch = await VaWatch.start(ground.cluster);
const ctx = new BenchContext(ground, watch, 2);
const table: { name: string; m: Readonly<Record<string, number>> }[] = [];
try {
  for (let round = 1; round <= Number(opts.rounds); round++) {
    for (const entry of entries) {
      if (opts.limit !== undefined) {
        const outcome = await runCycle(ctx, entry.binary, `probe-${entry.name}-r${round}`, params, Number(opts.limit) * 1048576, Number(opts["deadline-ms"]));
        console.log(`r${round} ${entry.name} at ${opts.limit} MiB: ${outcome.holds ? "holds" : (outcome.failure ?? "fails")} in ${round3(outcome.ms / 1000)} s${outcome.detail === undefined ? "" : ` (${outcome.detail})`}`);
        continue;
      }
      const result = await runContainerLimit(ctx, entry.binary, round, params);
      table.push({ name: entry.name, m: result.metrics });
      console.log(`r${round} ${entry.name} (load ${(await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ")}): ${Object.entries(result.metrics).map(([k, v]) => `${k}=${v}`).join(" ")}`);
      for (const line of result.notes ?? []) console.log(`  ${line}`);
    }
  }
  for (const entry of entries) {
    const rows = table.filter((row) => row.name === entry.name);
    console.log(`median ${entry.name}: ${Object.keys(rows[0]?.m ?? {}).map((k) => `${k}=${round3(median(rows.map((row) => row.m[k] ?? Number.NaN).filter(Number.isFinite)))}`).join(" ")}`);
  }
} finally {
  await watch.stop();
  await ground.stop();
}
