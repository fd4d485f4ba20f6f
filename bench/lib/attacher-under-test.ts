/**
 * Runs one attacher (ours or upstream's Go build) against the bench ground,
 * samples its memory from /proc while it runs, and tells when it is ready.
 */
import { readFileSync, statSync } from "node:fs";
import { spawnManaged, waitForCondition, type CommandWrapper, type ManagedProcess } from "../../test/ground/managed-process";
import { readCpuSeconds, readMemory, type ProcMemory } from "./proc-stats";

/** AttacherKind names the implementations compared: ours, upstream's, and the bare floor client (bench/floor/bare-attacher.ts). */
export type AttacherKind = "ours" | "go" | "floor";

/** AttacherBinary is an implementation and the executable that runs it. */
export interface AttacherBinary {
  readonly kind: AttacherKind;
  readonly path: string;
}

/** RssSample is one reading of VmRSS and of its private part (RssAnon), `t` in ms since exec. */
export interface RssSample {
  readonly t: number;
  readonly rssBytes: number;
  readonly anonBytes: number;
}

/** How often VmRSS is sampled. */
const sampleEveryMs = 200;

/**
 * Readiness as each implementation logs it at -v=2: ours logs "Caches
 * synced" once its VA, PV and CSINode lists are in; upstream starts its
 * workers right after client-go's reflectors log "Caches populated" for
 * VolumeAttachments and PersistentVolumes (the two informers its
 * controller.Run waits for), and logs nothing of its own there.
 */
export function isReady(kind: AttacherKind, log: string): boolean {
  if (kind === "ours") return log.includes('"Caches synced"');
  // The floor programs say so once their connections are open (the bare client: its watch answered).
  if (kind === "floor") return log.includes('"Floor ready"');
  return /"Caches populated"[^\n]*\*v1\.VolumeAttachment/.test(log) && /"Caches populated"[^\n]*\*v1\.PersistentVolume"/.test(log);
}

/** RunningAttacher is a started attacher with its samples so far. */
export class RunningAttacher {
  readonly rss: RssSample[] = [];
  readonly #timer: ReturnType<typeof setInterval>;

  constructor(
    readonly binary: AttacherBinary,
    readonly process: ManagedProcess,
    /** performance.now() just before exec. */
    readonly execAt: number,
  ) {
    this.#timer = setInterval(() => this.sample(), sampleEveryMs);
  }

  get pid(): number {
    return this.process.pid;
  }

  /**
   * sample records VmRSS and RssAnon now and returns that sample; once the
   * process is gone it records nothing and returns undefined. The periodic
   * sampling uses it; a figure of one moment uses sampleNow.
   */
  sample(): RssSample | undefined {
    const memory = readMemory(this.pid);
    if (memory === undefined) return undefined;
    const sample = { t: performance.now() - this.execAt, rssBytes: memory.rssBytes, anonBytes: memory.anonBytes };
    this.rss.push(sample);
    return sample;
  }

  /** sampleNow is sample for a figure of this moment: a process gone has none to give, and says so (see memoryNow). */
  sampleNow(): RssSample {
    const sample = this.sample();
    if (sample === undefined) throw this.goneError();
    return sample;
  }

  /** hwmBytes is VmHWM, the peak RSS since exec. */
  hwmBytes(): number {
    return this.memoryNow().hwmBytes;
  }

  /** anonBytes is RssAnon now, the private part of RSS. */
  anonBytes(): number {
    return this.memoryNow().anonBytes;
  }

  /**
   * memoryNow reads the process's memory for a figure of this moment. A
   * process gone has no memory: read as 0 bytes it would fall into a
   * report's medians unnoticed, so the run stops naming the binary and its log.
   */
  private memoryNow(): ProcMemory {
    const memory = readMemory(this.pid);
    if (memory === undefined) throw this.goneError();
    return memory;
  }

  private goneError(): Error {
    return new Error(`${this.binary.kind} attacher (${this.binary.path}) has exited, so it has no memory figures to give; its log: ${this.process.stderrPath}`);
  }

  /** cpuSeconds is user+system CPU used since exec. */
  cpuSeconds(): number {
    return readCpuSeconds(this.pid) ?? Number.NaN;
  }

  log(): string {
    return readFileSync(this.process.stderrPath, "utf8");
  }

  /** logBytes is the log's size now: an offset for logSince. */
  logBytes(): number {
    return statSync(this.process.stderrPath).size;
  }

  /** logSince is what the log gained after byte `offset` (a log of 100,000 VAs is tens of MB; only the tail is read). */
  async logSince(offset: number): Promise<string> {
    return Bun.file(this.process.stderrPath).slice(offset).text();
  }

  /** waitReady resolves with ms from exec to the readiness log line. */
  async waitReady(timeoutMs = 60_000): Promise<number> {
    let readyAt = 0;
    await waitForCondition(
      () => {
        if (!isReady(this.binary.kind, this.log())) return false;
        readyAt = performance.now();
        return true;
      },
      { description: `${this.binary.kind} attacher ready`, timeoutMs, watch: [this.process], intervalMs: 10 },
    );
    return readyAt - this.execAt;
  }

  /** stop ends the process (SIGTERM, then SIGKILL) and the sampling. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.process.stop();
  }
}

/** StartOptions say how to run an attacher. */
export interface StartOptions {
  readonly kubeconfig: string;
  readonly csiSocket: string;
  readonly logDir: string;
  /** Name of the log files. */
  readonly logName: string;
  /** Flags after --kubeconfig and --csi-address; the same for both kinds. */
  readonly args: readonly string[];
  /** What the attacher runs under, e.g. a shell joining a memory cgroup, which must exec it: the pid sampled must stay the attacher's. Default: none. */
  readonly wrapper?: CommandWrapper;
}

/** startAttacher execs the binary; it does not wait for readiness. */
export function startAttacher(binary: AttacherBinary, options: StartOptions): RunningAttacher {
  const execAt = performance.now();
  const process = spawnManaged({
    name: options.logName,
    logDir: options.logDir,
    command: [...(options.wrapper ?? []), binary.path, `--kubeconfig=${options.kubeconfig}`, `--csi-address=${options.csiSocket}`, ...options.args],
  });
  return new RunningAttacher(binary, process, execAt);
}
