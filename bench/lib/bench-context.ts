/**
 * What every scenario needs: the ground, the VA watch, how to start an
 * attacher with the shared flags, and waits that show progress.
 */
import { waitForCondition, type ManagedProcess } from "../../test/ground/managed-process";
import type { AttacherBinary, RunningAttacher, StartOptions } from "./attacher-under-test";
import { startAttacher } from "./attacher-under-test";
import { deleteVas, type BenchGround } from "./bench-ground";
import { progress } from "./progress";
import type { Series } from "./results";
import type { VaWatch } from "./va-watch";

/** AttacherLimits are the flags a scenario varies. */
export interface AttacherLimits {
  readonly workers: number;
  readonly qps: number;
  readonly burst: number;
}

/** What a scenario may add to an attacher's start: flags of its own, or what the attacher runs under (the container-limit scenario's memory cgroup). */
export interface ScenarioStartOptions extends Pick<StartOptions, "wrapper"> {
  /** More flags after the shared ones (the scale scenario's reconciler flags). Default none. */
  readonly extraArgs?: readonly string[];
}

/** BenchContext is shared by every scenario of one benchmark run. */
export class BenchContext {
  /** How many own PVs exist (bench-pv-0..count-1); grown on demand by prepareOwnPvs, back to 0 by removeOwnPvs. */
  readonly ownPvs = { count: 0 };
  /** How often each log name was started: the files are opened for appending, so a second exec under one name gets a name of its own. */
  readonly #logNameStarts = new Map<string, number>();

  constructor(
    readonly ground: BenchGround,
    readonly watch: VaWatch,
    /** -v for both attachers. */
    private readonly verbosity: number,
  ) {}

  /**
   * start execs an attacher with the flags both kinds share. -v=2 on both:
   * upstream's readiness line ("Caches populated") is logged at 2.
   */
  start(binary: AttacherBinary, label: string, limits: AttacherLimits, options: ScenarioStartOptions = {}): RunningAttacher {
    const { extraArgs = [], wrapper } = options;
    return startAttacher(binary, {
      ...(wrapper === undefined ? {} : { wrapper }),
      kubeconfig: this.ground.cluster.kubeconfigPath,
      csiSocket: this.ground.csiSocket,
      logDir: this.ground.logDir,
      logName: this.freshLogName(`${label}-${binary.kind}`),
      args: [`--worker-threads=${limits.workers}`, `--kube-api-qps=${limits.qps}`, `--kube-api-burst=${limits.burst}`, `-v=${this.verbosity}`, ...extraArgs],
    });
  }

  /**
   * freshLogName is `name` the first time, then `name-2`, `name-3`: the
   * readiness line and the start-up timeline are read from the whole log,
   * so a run must never find the lines of an earlier run under its name
   * (the floor scenario's cycle and the throughput scenario's first cell
   * share the label tp-w10-q1000-r1, and the cell's ready time read 2-9 ms).
   */
  private freshLogName(name: string): string {
    const starts = (this.#logNameStarts.get(name) ?? 0) + 1;
    this.#logNameStarts.set(name, starts);
    return starts === 1 ? name : `${name}-${starts}`;
  }

  /**
   * waitFor polls `done` every 50 ms, showing `status()` as progress; fails
   * after `timeoutMs`, naming the status, or at once if a process it
   * depends on (the attacher, the controller manager) dies.
   */
  async waitFor(description: string, done: () => boolean | Promise<boolean>, status: () => string, timeoutMs: number, watch: readonly ManagedProcess[] = []): Promise<void> {
    const check = async () => {
      if (await done()) return true;
      progress(status());
      return false;
    };
    await waitForCondition(check, { description, timeoutMs, status, watch });
  }

  /**
   * cleanUp deletes `names` and waits until the attacher has detached them
   * all. Returns ms from the first delete to the last VA gone.
   */
  async cleanUp(names: readonly string[], attacher: RunningAttacher, label: string, timeoutMs: number): Promise<number> {
    const started = performance.now();
    await deleteVas(this.ground.admin, names);
    await this.waitFor(`${label}: VAs gone`, () => this.watch.countGone(names) === names.length, () => `${label}: gone ${this.watch.countGone(names)}/${names.length}`, timeoutMs, [attacher.process]);
    return Math.max(0, ...names.map((n) => this.watch.goneAt.get(n) ?? started)) - started;
  }

  /** attachedCurve turns the watch's attach times of `names` into a count-over-time series from `t0`. */
  attachedCurve(names: readonly string[], t0: number): Series {
    const times = names.map((n) => this.watch.attachedAt.get(n)).filter((t): t is number => t !== undefined).sort((a, b) => a - b);
    const step = Math.max(1, Math.floor(times.length / 200));
    const points: [number, number][] = [[0, 0]];
    for (let i = step - 1; i < times.length; i += step) points.push([round3(((times[i] ?? t0) - t0) / 1000), i + 1]);
    const last = times[times.length - 1];
    if (last !== undefined && points[points.length - 1]?.[1] !== times.length) points.push([round3((last - t0) / 1000), times.length]);
    return points;
  }
}

/** rssCurve downsamples an attacher's RSS samples to at most ~200 [s, MiB] points. */
export function rssCurve(attacher: RunningAttacher): Series {
  const step = Math.max(1, Math.floor(attacher.rss.length / 200));
  return attacher.rss.filter((_, i) => i % step === 0).map((s) => [round3(s.t / 1000), round3(s.rssBytes / 1048576)] as const);
}

/** settleRss waits `ms`, sampling, and returns the median RSS in MiB of the last second. */
export async function settleRss(attacher: RunningAttacher, ms: number): Promise<number> {
  const until = performance.now() + ms;
  const window: number[] = [];
  while (performance.now() < until) {
    const { rssBytes } = attacher.sampleNow();
    if (until - performance.now() <= 1000) window.push(rssBytes);
    await Bun.sleep(100);
  }
  window.sort((a, b) => a - b);
  return round3((window[Math.floor(window.length / 2)] ?? attacher.sampleNow().rssBytes) / 1048576);
}

export function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
