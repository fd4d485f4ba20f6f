/**
 * What a machine needs to host the node ground, checked before anything is
 * started so that a test that needs the node fails saying what is missing,
 * never skips.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fixedHostPaths, hostPathsInUse } from "./host-paths";
import { heldBy, nodeLockHolder, nodeLockPath } from "./node-lock";

/** Where Debian's containernetworking-plugins puts the plugins. */
export const cniBinDir = "/usr/lib/cni";

/** The Debian packages that give each tool the node ground runs; .ci/run installs the missing ones. */
const packagesByTool = {
  containerd: "containerd",
  ctr: "containerd",
  runc: "runc",
  iptables: "iptables",
  umoci: "umoci",
} as const;

/** nodeGroundProblems lists what keeps this machine from hosting a node, empty when nothing does. */
export function nodeGroundProblems(): string[] {
  const problems: string[] = [];
  if (process.getuid?.() !== 0) problems.push("the node ground runs as root (the kubelet, containerd and runc need it)");
  for (const [tool, debianPackage] of Object.entries(packagesByTool)) {
    if (Bun.which(tool) === null) problems.push(`${tool} is not installed (Debian package ${debianPackage})`);
  }
  for (const plugin of ["bridge", "host-local"]) {
    if (!existsSync(join(cniBinDir, plugin))) problems.push(`${join(cniBinDir, plugin)} is missing (Debian package containernetworking-plugins)`);
  }
  const holder = nodeLockHolder();
  if (holder?.alive === true && holder.pid !== process.pid) problems.push(heldBy(holder));
  // A dead ground's lock: the ground that takes it over removes what that one left.
  const inUse = holder === undefined ? hostPathsInUse() : [];
  if (inUse.length > 0) {
    problems.push(
      `${inUse.join(", ")} already exist though no node ground holds ${nodeLockPath}: a kubelet or containerd of this ` +
        `machine's own uses them (the node ground cannot run beside one: these paths are fixed), or a ground was killed ` +
        `and its lock removed by hand; with no kubelet or containerd running, remove them (unmount what is mounted under ` +
        `them first) and run again`,
    );
  }
  return problems;
}

/** nodeGroundProblem is the one message a test fails with, or undefined when the machine can host a node. */
export function nodeGroundProblem(): string | undefined {
  const problems = nodeGroundProblems();
  if (problems.length === 0) return undefined;
  return `this machine cannot run the node ground (${fixedHostPaths.kubeletRoot}, containerd, a pod network):\n- ${problems.join("\n- ")}`;
}
