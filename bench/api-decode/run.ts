/**
 * `bun run bench/api-decode/run.ts --fixtures DIR [--rounds 5] [--n 1000,10000]`:
 * JSON.parse against protobuf-es on kube-apiserver's recorded answers
 * (record.ts), per kind (VA, PV, CSINode), per shape (list pages of 500, a
 * watch's events) and per N, with each of fixtures.ts's decoders. Each
 * measurement is a fresh process (decode.ts) with the JIT tiers the binary
 * runs with (DFG and FTL off), every decoder once in every round, and each
 * ratio is the median of the rounds' pairs against the JSON path that yields
 * the same thing (JSON.parse for protobuf-es, JSON.parse plus valibot for
 * the slim decoder). Prints a markdown table.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { measureInChild } from "../lib/measured-child";
import { median } from "../lib/stats";
import { decoders, kinds, type DecoderName, type Kind } from "./fixtures";

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

const fmt = (value: number) => (value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2));
const names = Object.keys(decoders) as DecoderName[];
/** Each decoder's ratio is taken against the JSON path that yields the same thing: bare objects, or the store's slim ones. */
const baselineOf: Record<DecoderName, DecoderName> = { json: "json", "json+valibot": "json+valibot", "protobuf-es": "json", "protobuf-slim": "json+valibot" };
console.log("| kind | shape | N | decoder | cold µs/item | warm µs/item | retained MiB | peak MiB | against | cold ratio | warm ratio | peak ratio |");
console.log("|---|---|---:|---|---:|---:|---:|---:|---|---:|---:|---:|");
for (const n of sizes) {
  for (const kind of kinds) {
    for (const what of ["list", "watch"]) {
      const present = names.filter((name) => (decoders[name].kinds as readonly Kind[]).includes(kind));
      const runs = Object.fromEntries(present.map((name) => [name, [] as Measurement[]])) as Record<DecoderName, Measurement[]>;
      for (let round = 0; round < rounds; round++) {
        for (const name of present) {
          runs[name].push(await measureInChild<Measurement>(join(import.meta.dir, "decode.ts"), ["--fixtures", values.fixtures, "--kind", kind, "--decoder", name, "--what", what, "--n", String(n)]));
        }
      }
      for (const name of present) {
        const med = (figure: (typeof figures)[number]) => fmt(median(runs[name].map((run) => run[figure])));
        const base = baselineOf[name];
        const ratio = (figure: (typeof figures)[number]) =>
          base === name ? "" : `${median(runs[base].map((b, round) => (runs[name][round] as Measurement)[figure] / b[figure])).toFixed(2)}x`;
        console.log(
          `| ${kind} | ${what} | ${n} | ${name} | ${med("coldMicrosPerItem")} | ${med("warmMicrosPerItem")} | ${med("retainedMiB")} | ${med("peakMiB")} | ${base === name ? "" : base} | ${ratio("coldMicrosPerItem")} | ${ratio("warmMicrosPerItem")} | ${ratio("peakMiB")} |`,
        );
      }
    }
  }
}
