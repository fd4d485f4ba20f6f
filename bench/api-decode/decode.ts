/**
 * One measurement in a fresh process (run.ts starts it, interleaving the
 * encodings): decode the recorded list pages or watch stream of one kind,
 * `--n` items of it, with one of fixtures.ts's decoders. Prints one JSON line:
 * - coldMicrosPerItem: CPU of the first pass, every item decoded once and
 *   kept alive, as a first list fills a cache (the interpreter's price);
 * - warmMicrosPerItem: CPU per item over the next passes, nothing kept;
 * - retainedMiB: RSS growth while the first pass's objects are alive, and
 *   peakMiB: the process's VmHWM at the end.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { decoders, frames, listPagesFile, watchFile, type DecoderName, type Kind } from "./fixtures";

const { values } = parseArgs({
  options: {
    fixtures: { type: "string" },
    kind: { type: "string" },
    decoder: { type: "string" },
    what: { type: "string" },
    n: { type: "string" },
    passes: { type: "string", default: "5" },
  },
});
const kind = values.kind as Kind;
const decoder = decoders[values.decoder as DecoderName];
const encoding = decoder.encoding;
const n = Number(values.n);
const passes = Number(values.passes);
if (values.fixtures === undefined || !["list", "watch"].includes(values.what ?? "")) throw new Error("usage: decode.ts --fixtures DIR --kind va|pv|csinode --decoder json|json+valibot|protobuf-es|protobuf-slim --what list|watch --n N [--passes 5]");

let decodeAll: () => unknown[];
if (values.what === "list") {
  // The first n/500 pages: what a paged list of n objects reads.
  const pages = frames(readFileSync(join(values.fixtures, listPagesFile(kind, encoding)))).slice(0, Math.ceil(n / 500));
  decodeAll = () => pages.flatMap((page) => decoder.page(kind, page));
} else {
  const stream = new Uint8Array(readFileSync(join(values.fixtures, watchFile(kind, encoding))));
  decodeAll = () => decoder.watch(kind, stream, n);
}

Bun.gc(true);
const rssBefore = process.memoryUsage().rss;
let started = process.cpuUsage();
const kept = decodeAll();
const cold = process.cpuUsage(started);
Bun.gc(true);
const retained = process.memoryUsage().rss - rssBefore;
const items = kept.length;
if (items < n) throw new Error(`only ${items} items recorded, ${n} asked`);
kept.length = 0;

started = process.cpuUsage();
for (let pass = 0; pass < passes; pass++) decodeAll();
const warm = process.cpuUsage(started);

const hwmKiB = Number(/VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? "0");
console.log(
  JSON.stringify({
    kind,
    decoder: values.decoder,
    what: values.what,
    n: items,
    coldMicrosPerItem: (cold.user + cold.system) / items,
    warmMicrosPerItem: (warm.user + warm.system) / (items * passes),
    retainedMiB: retained / 2 ** 20,
    peakMiB: hwmKiB / 1024,
  }),
);
