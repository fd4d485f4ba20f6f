/**
 * test-ground-start measures how long the test ground takes to be usable:
 * component preparation (the cached Go build check), and etcd plus
 * kube-apiserver to /readyz, cold (fresh data dir) and warm (reused dir).
 *
 *   bun run bench/test-ground-start.ts [runs=3]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureComponents } from "../test/ground/components";
import { startTestCluster } from "../test/ground/test-cluster";

const runs = Number(process.argv[2] ?? 3);

const componentsStarted = performance.now();
const components = await ensureComponents();
const componentsMs = performance.now() - componentsStarted;

interface Sample {
  readonly etcd: number;
  readonly apiserver: number;
  readonly total: number;
}

async function startOnce(dir: string | undefined): Promise<Sample> {
  const started = performance.now();
  const cluster = await startTestCluster({ components, ...(dir === undefined ? {} : { dir }) });
  const total = performance.now() - started;
  await cluster.stop();
  return { ...cluster.startupMs, total: Math.round(total) };
}

const cold: Sample[] = [];
const warm: Sample[] = [];
for (let run = 0; run < runs; run++) {
  const dir = mkdtempSync(join(tmpdir(), "bench-ground-"));
  try {
    cold.push(await startOnce(dir));
    warm.push(await startOnce(dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const row = (name: string, samples: Sample[]) =>
  `${name.padEnd(6)} etcd ${median(samples.map((s) => s.etcd))} ms, kube-apiserver ${median(samples.map((s) => s.apiserver))} ms, total ${median(samples.map((s) => s.total))} ms  (runs: ${samples.map((s) => s.total).join(", ")})`;
console.log(`components ready (cached build check): ${Math.round(componentsMs)} ms`);
console.log(`start to /readyz, median of ${runs}:`);
console.log(row("cold", cold));
console.log(row("warm", warm));
