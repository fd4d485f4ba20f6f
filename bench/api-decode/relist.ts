/**
 * `bun run bench/api-decode/relist.ts --fixtures DIR [--rounds 5]`: the CPU of a
 * relist (after 410 Gone) into stores that already hold every object at the
 * listed version, through the attacher's own parsers and stores: each object
 * parsed again (`parse`, as before Store.parseUnlessCached), or handed back
 * from the cache (`once`). Both in fresh processes with the binary's JIT
 * tiers, in turn each round; the pages are record.ts's JSON (JSON.parse is
 * paid alike and counted).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { cachedObjectParsers } from "../../src/controller/cached-objects";
import type { KubeObject } from "../../src/kube/objects/object-meta";
import { Store } from "../../src/kube/store";
import { measureInChild } from "../lib/measured-child";
import { median } from "../lib/stats";
import { decodePage, frames, kinds, listPagesFile, type Kind } from "./fixtures";

const ways = ["parse", "once"] as const;
type Way = (typeof ways)[number];

const { values } = parseArgs({ options: { fixtures: { type: "string" }, rounds: { type: "string", default: "5" }, child: { type: "string" }, kind: { type: "string" } } });
if (values.fixtures === undefined) throw new Error("usage: bun run bench/api-decode/relist.ts --fixtures DIR [--rounds 5]");
const fixtures = values.fixtures;

if (values.child !== undefined) {
  console.log(JSON.stringify(relist(values.kind as Kind, values.child as Way)));
} else {
  console.log("| kind | objects | parse again: CPU ms | once: CPU ms | once/parse (median of pairs) | pairs |");
  console.log("|---|---:|---:|---:|---:|---|");
  for (const kind of kinds) {
    const runs: Record<Way, { objects: number; cpuMs: number }[]> = { parse: [], once: [] };
    for (let round = 0; round < Number(values.rounds); round++) {
      for (const way of ways) {
        runs[way].push(await measureInChild<{ objects: number; cpuMs: number }>(import.meta.path, ["--fixtures", fixtures, "--child", way, "--kind", kind]));
      }
    }
    const pairs = runs.parse.map((parse, round) => (runs.once[round] as { cpuMs: number }).cpuMs / parse.cpuMs);
    const med = (way: Way) => median(runs[way].map((run) => run.cpuMs)).toFixed(0);
    console.log(`| ${kind} | ${runs.parse[0]?.objects} | ${med("parse")} | ${med("once")} | ${median(pairs).toFixed(2)}x | ${pairs.map((pair) => pair.toFixed(2)).join(" ")} |`);
  }
}

/** relist fills a store from the pages, then lists the same pages into it again and returns the second list's CPU. */
function relist(kind: Kind, way: Way): { objects: number; cpuMs: number } {
  const parsers = cachedObjectParsers("bench.csi.test");
  const parse: (raw: unknown) => KubeObject = { va: parsers.volumeAttachment, pv: parsers.persistentVolume, csinode: parsers.csiNode }[kind];
  const pages = frames(readFileSync(join(fixtures, listPagesFile(kind, "json"))));
  const store = new Store<KubeObject>();
  const list = (toObject: (raw: unknown) => KubeObject) => {
    const replacing = store.startReplace();
    for (const page of pages) for (const raw of decodePage.json(kind, page).items) replacing.add(toObject(raw));
    replacing.finish();
  };
  list(parse);
  const started = process.cpuUsage();
  list(way === "parse" ? parse : (raw) => store.parseUnlessCached(raw, parse));
  const cpu = process.cpuUsage(started);
  return { objects: store.size, cpuMs: (cpu.user + cpu.system) / 1000 };
}
