/**
 * A container run by Debian's runc, for the tests that run the sidecar
 * image as a kubelet would: `runc run` in the foreground (its exit code is
 * the container's), `runc kill`, `runc state`, and the container's memory
 * cgroup. Disposing it kills what still runs and deletes the container.
 */
import { accessSync, constants, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnManaged, waitForCondition, type ManagedProcess } from "../../ground/managed-process";
import type { RuntimeConfig } from "./runc-bundle";

/** Where cgroup v1 mounts the memory controller. */
const memoryCgroupRoot = "/sys/fs/cgroup/memory";

/**
 * runcGroundProblem says why this machine cannot run the runc tests, or
 * undefined if it can: runc needs root, a writable memory cgroup for the
 * Deployment's limit, and the image tools. The tests fail with this
 * sentence rather than skip: CI runs as root and must run them.
 */
export function runcGroundProblem(): string | undefined {
  if (process.getuid?.() !== 0) return "the runc tests run containers and need root (CI runs as root)";
  const missing = ["runc", "umoci", "skopeo"].filter((tool) => Bun.which(tool) === null);
  if (missing.length > 0) return `the runc tests need ${missing.join(", ")}: apt-get install -y --no-install-recommends ${missing.join(" ")} (.ci/run does)`;
  try {
    accessSync(join(memoryCgroupRoot, "memory.limit_in_bytes"), constants.R_OK);
    accessSync(memoryCgroupRoot, constants.W_OK);
  } catch (e: unknown) {
    return `the runc tests set the Deployment's memory limit and need cgroup v1's memory controller writable at ${memoryCgroupRoot} (${e instanceof Error ? e.message : String(e)})`;
  }
  return undefined;
}

/** MemoryUse is the container's memory cgroup, read while it runs. */
export interface MemoryUse {
  readonly limitBytes: number;
  readonly maxUsageBytes: number;
  readonly failCount: number;
  readonly oomKills: number;
  /** Now, from memory.stat: anonymous memory and page cache (the binary's pages it read are cache). */
  readonly rssBytes: number;
  readonly cacheBytes: number;
}

/** Options of {@link RuncContainer.start}. */
export interface RuncContainerOptions {
  /** Container id, unique on the machine. */
  readonly id: string;
  /** A new directory to hold config.json. */
  readonly bundle: string;
  readonly config: RuntimeConfig & { linux: { cgroupsPath?: string } };
  /** Directory for the container's stdout and stderr logs. */
  readonly logDir: string;
}

/** RuncContainer is one `runc run` in the foreground. */
export class RuncContainer implements AsyncDisposable {
  private constructor(
    readonly id: string,
    readonly process: ManagedProcess,
    private readonly cgroupsPath: string | undefined,
  ) {}

  /** start writes the bundle's config.json and runs it. */
  static start(options: RuncContainerOptions): RuncContainer {
    mkdirSync(options.bundle, { recursive: true });
    writeFileSync(join(options.bundle, "config.json"), JSON.stringify(options.config, null, 2));
    const process = spawnManaged({ name: options.id, command: ["runc", "run", "--bundle", options.bundle, options.id], logDir: options.logDir });
    return new RuncContainer(options.id, process, options.config.linux.cgroupsPath);
  }

  /** log is what the container wrote to stderr so far (the attacher logs there). */
  log(): string {
    return readFileSync(this.process.stderrPath, "utf8");
  }

  /** stdout is what the container wrote to stdout so far. */
  stdout(): string {
    return readFileSync(this.process.stdoutPath, "utf8");
  }

  /** waitForLog waits for a log line matching `pattern`, failing early if the container exits. */
  async waitForLog(pattern: RegExp, timeoutMs = 60_000): Promise<void> {
    await waitForCondition(() => pattern.test(this.log()), { description: `container ${this.id} log line matching ${pattern}`, timeoutMs, watch: [this.process] });
  }

  /** pid is the host pid of the container's first process, from `runc state`. */
  pid(): number {
    const state = Bun.spawnSync(["runc", "state", this.id], { stdout: "pipe", stderr: "pipe" });
    if (state.exitCode !== 0) throw new Error(`runc state ${this.id} failed: ${state.stderr.toString()}`);
    return (JSON.parse(state.stdout.toString()) as { pid: number }).pid;
  }

  /** kill sends `signal` (runc's name, e.g. TERM) to the container's first process. */
  kill(signal: string): void {
    const kill = Bun.spawnSync(["runc", "kill", this.id, signal], { stdout: "pipe", stderr: "pipe" });
    if (kill.exitCode !== 0) throw new Error(`runc kill ${this.id} ${signal} failed: ${kill.stderr.toString()}`);
  }

  /** memoryUse reads the container's memory cgroup (cgroup v1). */
  memoryUse(): MemoryUse {
    if (this.cgroupsPath === undefined) throw new Error(`container ${this.id} has no cgroupsPath`);
    const dir = join(memoryCgroupRoot, this.cgroupsPath);
    const number = (file: string) => Number(readFileSync(join(dir, file), "utf8").trim());
    const field = (file: string, name: string) => Number(new RegExp(`^${name} (\\d+)$`, "m").exec(readFileSync(join(dir, file), "utf8"))?.[1] ?? Number.NaN);
    return {
      limitBytes: number("memory.limit_in_bytes"),
      maxUsageBytes: number("memory.max_usage_in_bytes"),
      failCount: number("memory.failcnt"),
      oomKills: field("memory.oom_control", "oom_kill"),
      rssBytes: field("memory.stat", "total_rss"),
      cacheBytes: field("memory.stat", "total_cache"),
    };
  }

  /** delete removes the container's state; runc run already did for a container that exited. */
  delete(): void {
    if (!existsSync(join("/run/runc", this.id))) return;
    const remove = Bun.spawnSync(["runc", "delete", "--force", this.id], { stdout: "pipe", stderr: "pipe" });
    if (remove.exitCode !== 0) throw new Error(`runc delete --force ${this.id} failed: ${remove.stderr.toString()}`);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (this.process.running) {
      // SIGKILL through runc reaches the container even when runc run's own
      // forwarding is gone; then runc run exits.
      Bun.spawnSync(["runc", "kill", this.id, "KILL"], { stdout: "ignore", stderr: "ignore" });
      await this.process.stop(5_000);
    }
    this.delete();
  }
}
