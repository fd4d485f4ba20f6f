/**
 * containerd for the node ground: Debian's containerd 1.6 with its CRI
 * plugin, state under the fixed /run/containerd (host-paths.ts), images and
 * snapshots under the ground's directory. The knobs are the ones this
 * machine kind needs (issue 27, checked 2026-11-26):
 * - `restrict_oom_score_adj`: the sandbox lacks CAP_SYS_RESOURCE, so runc
 *   may not lower a process's OOM score; without it every pod sandbox fails
 *   with "can't get final child's PID from pipe: EOF".
 * - `SystemdCgroup = false`: no systemd; the kubelet's cgroupDriver is cgroupfs.
 * - `sandbox_image`: there is no registry, so the pause image is built here
 *   and imported before the first pod (node-images.ts).
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnManaged, waitForCondition, type ManagedProcess } from "../managed-process";
import { fixedHostPaths } from "./host-paths";
import { run } from "./host-commands";

/** The CRI's containerd namespace: where the kubelet's images and containers live, and `ctr -n` must look. */
export const criNamespace = "k8s.io";

/** containerd's socket, in its fixed state directory. */
export const containerdSocket = join(fixedHostPaths.containerdState, "containerd.sock");

export interface ContainerdOptions {
  /** Directory for its root (images, snapshots), config and logs. */
  readonly dir: string;
  /** The pause image's name, imported before any pod starts. */
  readonly sandboxImage: string;
  /** Where the CNI network configuration is (pod-network.ts). */
  readonly cniConfDir: string;
  /** Where the CNI plugins are (Debian's containernetworking-plugins). */
  readonly cniBinDir: string;
  /** Deadline in ms for its socket to answer; default 30000. */
  readonly startTimeoutMs?: number;
}

/** containerdConfig is the config.toml (version 2, containerd 1.6). */
export function containerdConfig(options: ContainerdOptions): string {
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return [
    "version = 2",
    `root = ${JSON.stringify(join(options.dir, "root"))}`,
    `state = ${JSON.stringify(fixedHostPaths.containerdState)}`,
    "[grpc]",
    `  address = ${JSON.stringify(containerdSocket)}`,
    `[${cri}]`,
    `  sandbox_image = ${JSON.stringify(options.sandboxImage)}`,
    "  restrict_oom_score_adj = true",
    `[${cri}.containerd]`,
    '  default_runtime_name = "runc"',
    `[${cri}.containerd.runtimes.runc]`,
    '  runtime_type = "io.containerd.runc.v2"',
    `[${cri}.containerd.runtimes.runc.options]`,
    "  SystemdCgroup = false",
    `[${cri}.cni]`,
    `  bin_dir = ${JSON.stringify(options.cniBinDir)}`,
    `  conf_dir = ${JSON.stringify(options.cniConfDir)}`,
    "",
  ].join("\n");
}

/** Containerd is the running daemon. */
export class Containerd {
  constructor(
    readonly process: ManagedProcess,
    private readonly socket: string,
  ) {}

  /** ctr runs `ctr` against this daemon in the CRI namespace. */
  ctr(args: readonly string[]): string {
    return run(["ctr", `--address=${this.socket}`, "-n", criNamespace, ...args]).stdout;
  }

  /** importImage imports an image archive (docker/OCI), as `k3s ctr images import` does. */
  importImage(archive: string): string {
    return this.ctr(["images", "import", archive]);
  }

  /** imageNames lists the images the CRI namespace holds. */
  imageNames(): string[] {
    return this.ctr(["images", "ls", "-q"]).split("\n").filter((line) => line !== "");
  }

  /**
   * killAllTasks SIGKILLs and deletes every container task the kubelet
   * left (it is stopped first), so that the shims exit and the mounts go.
   */
  killAllTasks(): void {
    const tasks = this.ctr(["tasks", "ls", "-q"]).split("\n").filter((line) => line !== "");
    for (const task of tasks) run(["ctr", `--address=${this.socket}`, "-n", criNamespace, "tasks", "kill", "--signal", "SIGKILL", task], { allowFailure: true });
    for (const task of tasks) run(["ctr", `--address=${this.socket}`, "-n", criNamespace, "tasks", "delete", "--force", task], { allowFailure: true });
  }

  /** taskPid is the host PID of a container's task (`containerd://ID` in a pod's status names it). */
  taskPid(containerId: string): number {
    const id = containerId.replace(/^containerd:\/\//, "");
    const line = this.ctr(["tasks", "ls"]).split("\n").find((row) => row.split(/\s+/)[0] === id);
    const pid = Number(line?.split(/\s+/)[1]);
    if (!Number.isInteger(pid) || pid <= 0) throw new Error(`containerd has no running task ${id}`);
    return pid;
  }

  /** runningTasks counts the tasks still there. */
  runningTasks(): number {
    return this.ctr(["tasks", "ls", "-q"]).split("\n").filter((line) => line !== "").length;
  }

  stop(): Promise<void> {
    return this.process.stop();
  }
}

/** startContainerd writes its config, starts it and resolves once `ctr version` answers. */
export async function startContainerd(options: ContainerdOptions): Promise<Containerd> {
  mkdirSync(options.dir, { recursive: true });
  const config = join(options.dir, "config.toml");
  writeFileSync(config, containerdConfig(options));
  const process = spawnManaged({ name: "containerd", logDir: options.dir, command: ["containerd", `--config=${config}`] });
  const containerd = new Containerd(process, containerdSocket);
  await waitForCondition(() => existsSync(containerdSocket) && run(["ctr", `--address=${containerdSocket}`, "version"], { allowFailure: true }).exitCode === 0, {
    description: `containerd's socket ${containerdSocket}`,
    timeoutMs: options.startTimeoutMs ?? 30_000,
    intervalMs: 100,
    watch: [process],
  });
  return containerd;
}
