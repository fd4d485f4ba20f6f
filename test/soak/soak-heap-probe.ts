import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeHeapProbeLauncher } from "../ground/heap-probe-launcher";
import { slopePerMinute } from "./slope-per-minute";

/** One line of test/ground/heap-probe-preload.ts, the fields the soak trends. */
interface ProbeLine {
  readonly pid: number;
  readonly atMs: number;
  /** Live JS heap after a full GC. */
  readonly heapSize: number;
  readonly objectCount: number;
  /** Live "Timeout" objects: every setTimeout and setInterval not yet collected. */
  readonly timers: number;
  /** RssAnon after the GC. */
  readonly anon: number;
}

/**
 * SoakHeapProbe is the soak's SOAK_HEAP_PROBE=1 mode: the attacher runs from
 * source under test/ground/heap-probe-preload.ts, which on SIGUSR2 runs a full
 * GC and writes the live heap, object count and live timers. Bun offers no
 * count of active handles, so this is how the soak shows timers do not grow
 * (the compiled binary cannot take a preload).
 */
export class SoakHeapProbe {
  readonly #out: string;
  /** The program the attacher supervisor runs instead of dist/csi-attacher. */
  readonly binary: string;

  constructor(dir: string) {
    this.#out = join(dir, "heap-probe.jsonl");
    this.binary = join(dir, "attacher-heap-probe.sh");
    writeHeapProbeLauncher(this.binary, this.#out);
  }

  /** probe asks the attacher `pid` for one line; it arrives within the GC's time. */
  probe(pid: number): void {
    process.kill(pid, "SIGUSR2");
  }

  /** report prints, per attacher process, the trend of the probed values after `warmUpMs` of its life. */
  report(warmUpMs: number): string[] {
    const lines = existsSync(this.#out) ? readFileSync(this.#out, "utf8").split("\n").filter((line) => line !== "") : [];
    const probes = lines.map((line) => JSON.parse(line) as ProbeLine);
    const report: string[] = [];
    for (const pid of new Set(probes.map((probe) => probe.pid))) {
      const own = probes.filter((probe) => probe.pid === pid);
      const start = own[0]?.atMs ?? 0;
      const trended = own.filter((probe) => probe.atMs - start >= warmUpMs).map((probe) => ({ ...probe, atMs: probe.atMs - start }));
      if (trended.length < 2) {
        report.push(`pid ${pid}: too few heap probes after warm-up (${trended.length})`);
        continue;
      }
      const range = (value: (probe: ProbeLine) => number, scale = 1, digits = 0) =>
        `${(Math.min(...trended.map(value)) / scale).toFixed(digits)}-${(Math.max(...trended.map(value)) / scale).toFixed(digits)}`;
      const slope = (value: (probe: ProbeLine) => number, scale = 1) => (slopePerMinute(trended, value) / scale).toFixed(3);
      const mib = 1024 * 1024;
      report.push(
        `pid ${pid}: ${trended.length} heap probes; after full GC: live heap ${range((p) => p.heapSize, mib, 1)} MiB (slope ${slope((p) => p.heapSize, mib)} MiB/min), ` +
          `objects ${range((p) => p.objectCount)} (slope ${slope((p) => p.objectCount)}/min), live timers ${range((p) => p.timers)} (slope ${slope((p) => p.timers)}/min), ` +
          `anon ${range((p) => p.anon, mib, 1)} MiB (slope ${slope((p) => p.anon, mib)} MiB/min)`,
      );
    }
    return report;
  }
}
