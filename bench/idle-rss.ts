/**
 * idle-rss measures the resident memory (VmRSS) of the compiled attacher at
 * idle, caches synced, with the HTTP endpoint off, on, and on after a few
 * scrapes, against the test ground and the fault-injecting driver.
 *
 *   bun run build && bun run bench/idle-rss.ts [runs=3] [samples=5]
 *
 * Each run starts a fresh attacher per mode (modes interleaved, so drift
 * on a shared machine hits all alike), waits for "Caches synced", lets it
 * settle, then reads /proc/<pid>/status once a second.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freeLoopbackPorts } from "../test/ground/free-ports";
import { startTestCluster } from "../test/ground/test-cluster";
import { launchFakeCsiDriver } from "../test/ground/fake-csi-driver/launch";
import { startAttacher } from "../test/ground/attacher-process";

const runs = Number(process.argv[2] ?? 3);
const samplesPerRun = Number(process.argv[3] ?? 5);
const settleMs = 5_000;

type Mode = "endpoint off" | "endpoint on" | "endpoint on, scraped";
const modes: readonly Mode[] = ["endpoint off", "endpoint on", "endpoint on, scraped"];

function vmRssKiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((entry) => entry.startsWith("VmRSS:"));
  return Number(line?.split(/\s+/)[1]);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const cluster = await startTestCluster();
const dir = mkdtempSync(join(tmpdir(), "bench-idle-rss-"));
const driver = await launchFakeCsiDriver({ directory: dir, config: { name: "rss.fake.csi.test" } });
const results = new Map<Mode, number[]>(modes.map((mode) => [mode, []]));
try {
  for (let run = 0; run < runs; run++) {
    for (const mode of modes) {
      const { http: port } = await freeLoopbackPorts(["http"]);
      const args = mode === "endpoint off" ? ["-v=2"] : ["-v=2", `--http-endpoint=127.0.0.1:${port}`];
      await using attacher = await startAttacher({ kubeconfig: cluster.kubeconfigPath, csiAddress: driver.csiSocket, logDir: dir, args, name: `attacher-${run}-${modes.indexOf(mode)}` });
      if (mode === "endpoint on, scraped") {
        for (let scrape = 0; scrape < 3; scrape++) await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      }
      await pause(settleMs);
      for (let sample = 0; sample < samplesPerRun; sample++) {
        results.get(mode)?.push(vmRssKiB(attacher.process.pid));
        await pause(1_000);
      }
    }
  }
} finally {
  await driver[Symbol.asyncDispose]();
  await cluster.stop();
}

const mib = (kib: number) => (kib / 1024).toFixed(1);
console.log(`VmRSS of dist/csi-attacher at idle, ${runs} runs x ${samplesPerRun} samples (MiB):`);
for (const [mode, values] of results) {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
  console.log(`  ${mode.padEnd(22)} median ${mib(median)}  min ${mib(sorted[0] ?? Number.NaN)}  max ${mib(sorted.at(-1) ?? Number.NaN)}`);
}
