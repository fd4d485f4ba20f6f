import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { spawnManaged, waitForCondition, type CommandWrapper, type ManagedProcess } from "./managed-process";

/** The compiled binary the end-to-end tests run: `bun run build` writes it. */
export const attacherBinary = join(import.meta.dir, "../../dist/csi-attacher");

export interface AttacherOptions {
  readonly kubeconfig: string;
  readonly csiAddress: string;
  /** Directory for the attacher's log files. */
  readonly logDir: string;
  /** Further flags, e.g. ["--timeout=2s"]. */
  readonly args?: readonly string[];
  /** Name for log files when one test runs several attachers. Default "attacher". */
  readonly name?: string;
  /**
   * Run the attacher under its own hostname, in a UTS namespace of its own
   * (`unshare --uts`, as root), as each replica of a Deployment has one:
   * leader election's identity is the hostname. Default: the host's.
   */
  readonly hostname?: string;
  /** Extra environment variables, on top of the test's own environment. */
  readonly env?: Record<string, string>;
  /** The program to run instead of dist/csi-attacher (the soak's heap-probed run from source). */
  readonly binary?: string;
  /** What the binary runs under (QEMU for another CPU's binary, a shell joining a memory cgroup). Default: none. */
  readonly wrapper?: CommandWrapper;
  /** How long to wait for the caches to sync. Default 30 s. */
  readonly syncTimeoutMs?: number;
}

/**
 * AttacherProcess is the compiled csi-attacher running against the test
 * cluster, with its log readable by the test.
 */
export class AttacherProcess implements AsyncDisposable {
  constructor(readonly process: ManagedProcess) {}

  /** log returns everything the attacher wrote to stderr so far (klog writes there). */
  log(): string {
    return readFileSync(this.process.stderrPath, "utf8");
  }

  /** waitForLog waits until a log line matches `pattern`, failing early if the attacher exits. */
  async waitForLog(pattern: RegExp, timeoutMs = 30_000): Promise<void> {
    await waitForCondition(() => pattern.test(this.log()), {
      description: `attacher log line matching ${pattern}`,
      timeoutMs,
      watch: [this.process],
    });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.process.stop();
  }
}

/**
 * Upstream's default client-side limit (5 qps, burst 10) would make tests
 * that create many objects wait on it; a test that wants the limit passes
 * its own --kube-api-qps/--kube-api-burst, which come later and win.
 */
const unthrottled = ["--kube-api-qps=1000", "--kube-api-burst=2000"];

/** startAttacher runs dist/csi-attacher with the given flags and waits until its caches have synced. */
export async function startAttacher(options: AttacherOptions, waitForSync = true): Promise<AttacherProcess> {
  const binary = options.binary ?? attacherBinary;
  if (!existsSync(binary)) throw new Error(`${binary} is missing: run \`bun run build\` first`);
  const command = [
    ...(options.hostname === undefined ? [] : ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', options.hostname]),
    ...(options.wrapper ?? []),
    binary,
    `--kubeconfig=${options.kubeconfig}`,
    `--csi-address=${options.csiAddress}`,
    "-v=4",
    ...unthrottled,
    ...(options.args ?? []),
  ];
  const process = spawnManaged({
    name: options.name ?? "attacher",
    command,
    logDir: options.logDir,
    ...(options.env ? { env: { ...globalThis.process.env, ...options.env } } : {}),
  });
  const attacher = new AttacherProcess(process);
  if (waitForSync) await attacher.waitForLog(/"Caches synced"/, options.syncTimeoutMs);
  return attacher;
}
