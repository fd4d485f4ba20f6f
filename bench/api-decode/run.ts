/**
 * `bun run bench/api-decode/run.ts --fixtures DIR [--rounds 5] [--n 1000,10000]`:
 * JSON.parse against protobuf-es on kube-apiserver's recorded answers
 * (record.ts), per kind (VA, PV, CSINode), per shape (list pages of 500, a
 * watch's events) and per N. Each measurement is a fresh process
 * (decode.ts) with the JIT tiers the binary runs with (DFG and FTL off),
 * JSON then protobuf in every round, and each ratio protobuf/JSON is the
 * median of the rounds' pairs. Prints a markdown table.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { median } from "../lib/stats";
import { encodings, kinds, type Encoding } from "./fixtures";

const { values } = parseArgs({
  options: { fixtures: { type: "string" }, rounds: { type: "string", default: "5" }, n: { type: "string", default: "1000,10000" } },
});
if (values.fixtures === undefined) throw new Error("usage: bun run bench/api-decode/run.ts --fixtures DIR [--rounds 5] [--n 1000,10000]");
const rounds = Number(values.rounds);
const sizes = values.n.split(",").map(Number);

interface Measurement {
  readonly coldMicrosPerItem: number;
  readonly warmMicrosPerItem: number;
  readonly retainedMiB: number;
  readonly peakMiB: number;
}
const figures = ["coldMicrosPerItem", "warmMicrosPerItem", "retainedMiB", "peakMiB"] as const;

async function measure(args: string[]): Promise<Measurement> {
  const child = Bun.spawn([process.execPath, join(import.meta.dir, "decode.ts"), ...args], {
    env: { ...process.env, BUN_JSC_useDFGJIT: "0", BUN_JSC_useFTLJIT: "0" },
    stdout: "pipe",
    stderr: "inherit",
  });
  const out = await new Response(child.stdout).text();
  if ((await child.exited) !== 0) throw new Error(`decode.ts ${args.join(" ")} failed`);
  return JSON.parse(out) as Measurement;
}

const fmt = (value: number) => (value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2));
console.log(`| kind | shape | N | JSON cold / warm µs per item | protobuf cold / warm µs per item | protobuf/JSON cold | warm | retained MiB JSON / protobuf | peak MiB JSON / protobuf | protobuf/JSON peak |`);
console.log(`|---|---|---:|---:|---:|---:|---:|---:|---:|---:|`);
for (const n of sizes) {
  for (const kind of kinds) {
    for (const what of ["list", "watch"]) {
      const runs: Record<Encoding, Measurement[]> = { json: [], protobuf: [] };
      for (let round = 0; round < rounds; round++) {
        for (const encoding of encodings) {
          runs[encoding].push(await measure(["--fixtures", values.fixtures, "--kind", kind, "--encoding", encoding, "--what", what, "--n", String(n)]));
        }
      }
      const med = (encoding: Encoding, figure: (typeof figures)[number]) => median(runs[encoding].map((run) => run[figure]));
      const ratio = (figure: (typeof figures)[number]) => median(runs.json.map((json, round) => (runs.protobuf[round] as Measurement)[figure] / json[figure]));
      console.log(
        `| ${kind} | ${what} | ${n} | ${fmt(med("json", "coldMicrosPerItem"))} / ${fmt(med("json", "warmMicrosPerItem"))} | ${fmt(med("protobuf", "coldMicrosPerItem"))} / ${fmt(med("protobuf", "warmMicrosPerItem"))} | ` +
          `${ratio("coldMicrosPerItem").toFixed(2)}x | ${ratio("warmMicrosPerItem").toFixed(2)}x | ${fmt(med("json", "retainedMiB"))} / ${fmt(med("protobuf", "retainedMiB"))} | ` +
          `${fmt(med("json", "peakMiB"))} / ${fmt(med("protobuf", "peakMiB"))} | ${ratio("peakMiB").toFixed(2)}x |`,
      );
    }
  }
}
