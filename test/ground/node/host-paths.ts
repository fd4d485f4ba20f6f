/**
 * The host paths a node needs that no flag moves: the kubelet and
 * containerd 1.6 fix them (the kubelet's plugin registration directory and
 * pod logs; containerd's shim sockets and libcni's cache). The node ground
 * creates them when it starts and removes them, with whatever its pods left
 * in them, when it stops; so only one node ground can run on a machine at a
 * time (see node-lock.ts), and a machine that already runs a kubelet or
 * containerd of its own cannot host one.
 */
import { existsSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { run } from "./host-commands";

/** The paths, each with who fixes it. */
export const fixedHostPaths = {
  /** The kubelet's root: pods' volumes, plugins, plugins_registry, its own certificate. */
  kubeletRoot: "/var/lib/kubelet",
  /** Pod logs (the kubelet), and their per-container symlinks beside them. */
  podLogs: "/var/log/pods",
  containerLogs: "/var/log/containers",
  /** libcni's result cache (containerd's CRI plugin), and host-local's leases unless told otherwise. */
  cni: "/var/lib/cni",
  /** containerd's state: its socket, the shims' sockets and the tasks' bundles. */
  containerdState: "/run/containerd",
} as const;

/** hostPathsInUse names the fixed paths that exist already: someone else's node, or a ground that was killed. */
export function hostPathsInUse(): string[] {
  return Object.values(fixedHostPaths).filter((path) => existsSync(path));
}

/**
 * removeHostPaths unmounts whatever the node's pods left mounted under the
 * fixed paths (projected service-account tokens, emptyDirs in memory,
 * containers' root filesystems and /dev/shm), deepest first, then removes
 * the paths.
 */
export function removeHostPaths(): void {
  const roots = Object.values(fixedHostPaths);
  const mounts = readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[4] ?? "")
    .filter((mountPoint) => roots.some((root) => mountPoint === root || mountPoint.startsWith(`${root}/`)))
    .sort((a, b) => b.length - a.length);
  for (const mountPoint of mounts) run(["umount", "--lazy", mountPoint], { allowFailure: true });
  for (const root of roots) rmSync(root, { recursive: true, force: true });
}

/**
 * killOrphanedContainers SIGKILLs what containerd's shims ran (by the
 * init.pid files in its fixed state directory), then the shims (the
 * processes serving that state directory's socket): when the ground itself
 * is killed (Ctrl-C, a crashed test process), containerd goes first and
 * its shims and containers outlive it.
 */
export function killOrphanedContainers(): void {
  const tasks = join(fixedHostPaths.containerdState, "io.containerd.runtime.v2.task");
  const pids: number[] = [];
  if (existsSync(tasks)) {
    for (const namespace of readdirSync(tasks)) {
      for (const task of readdirSync(join(tasks, namespace))) {
        const path = join(tasks, namespace, task, "init.pid");
        if (existsSync(path)) pids.push(Number(readFileSync(path, "utf8").trim()));
      }
    }
  }
  const shimAddress = `-address\0${join(fixedHostPaths.containerdState, "containerd.sock")}`;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (commandLine.includes("containerd-shim") && commandLine.includes(shimAddress)) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  for (const pid of pids) {
    if (!Number.isInteger(pid) || pid <= 1) continue;
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone already.
    }
  }
}

/**
 * removeKubepodsCgroups removes the kubelet's `kubepods` cgroup tree in
 * every cgroup v1 hierarchy (and the unified one), children first: the
 * kubelet creates it under the root and never removes it.
 */
export function removeKubepodsCgroups(): void {
  const base = "/sys/fs/cgroup";
  const hierarchies = existsSync(join(base, "cgroup.controllers")) ? [base] : readdirSync(base).map((name) => join(base, name));
  for (const hierarchy of hierarchies) removeCgroupTree(join(hierarchy, "kubepods"));
}

function removeCgroupTree(dir: string): void {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) removeCgroupTree(join(dir, entry.name));
  }
  // A cgroup directory goes with rmdir, never with a recursive delete (its files cannot be unlinked).
  run(["rmdir", dir], { allowFailure: true });
}
