/**
 * The real binaries the test ground runs, and the tools its tests check
 * with, built from pinned Go modules by build-components.sh into a cache
 * outside the repository.
 */
import { accessSync, constants } from "node:fs";
import { join } from "node:path";

/** ComponentPaths are absolute paths of the built, executable components. */
export interface ComponentPaths {
  readonly kubeApiserver: string;
  /** Runs the attach/detach and PV binder controllers in the controller-driven tests. */
  readonly kubeControllerManager: string;
  /** The node's kubelet (test/ground/node/). */
  readonly kubelet: string;
  /** Schedules the node's Pods (test/ground/node/). */
  readonly kubeScheduler: string;
  readonly etcd: string;
  readonly mockCsiDriver: string;
  /** The node's sandbox (pause) program, static, packed into containerd's sandbox_image. */
  readonly pause: string;
  /** Prometheus' promtool, for `promtool check metrics` and `promtool test rules`. */
  readonly promtool: string;
  /** The Prometheus server, scraping an attacher in the monitoring test. */
  readonly prometheus: string;
}

const scriptPath = join(import.meta.dir, "build-components.sh");

/** The script's component names, mapped to the fields they fill. */
const fieldsByName = {
  "kube-apiserver": "kubeApiserver",
  "kube-controller-manager": "kubeControllerManager",
  kubelet: "kubelet",
  "kube-scheduler": "kubeScheduler",
  etcd: "etcd",
  "mock-csi-driver": "mockCsiDriver",
  pause: "pause",
  promtool: "promtool",
  prometheus: "prometheus",
} as const satisfies Record<string, keyof ComponentPaths>;

let pending: Promise<ComponentPaths> | undefined;

/**
 * ensureComponents builds whatever is missing from the cache (a no-op taking
 * well under a second on a warm machine) and returns the binaries' paths.
 * Progress goes to this process's stderr, since a cold kube-apiserver build
 * takes many minutes and silence would look like a hang. One build per
 * process: concurrent callers share it.
 */
export function ensureComponents(): Promise<ComponentPaths> {
  pending ??= build().catch((e: unknown) => {
    // A failed build is not cached, so a later caller retries it.
    pending = undefined;
    throw e;
  });
  return pending;
}

async function build(): Promise<ComponentPaths> {
  const child = Bun.spawn({
    cmd: ["bash", scriptPath],
    // The script prints one `name=path` line per component in this mode.
    env: { ...process.env, BUILD_COMPONENTS_PRINT: "paths" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "inherit",
  });
  const [stdout, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
  if (code !== 0) {
    throw new Error(`${scriptPath} exited with code ${code}; see its output above`);
  }
  return parsePaths(stdout);
}

function parsePaths(stdout: string): ComponentPaths {
  const found: Partial<Record<keyof ComponentPaths, string>> = {};
  for (const line of stdout.split("\n")) {
    const eq = line.indexOf("=");
    if (eq < 0) continue;
    const name = line.slice(0, eq);
    if (!Object.hasOwn(fieldsByName, name)) continue;
    found[fieldsByName[name as keyof typeof fieldsByName]] = line.slice(eq + 1).trim();
  }
  const missing = Object.values(fieldsByName).filter((field) => found[field] === undefined);
  if (missing.length > 0) {
    throw new Error(`${scriptPath} did not print a path for ${missing.join(", ")}; stdout was:\n${stdout}`);
  }
  const paths = found as ComponentPaths;
  for (const path of Object.values(paths)) {
    // Fail here, naming the file, rather than later with a bare ENOENT from spawn.
    accessSync(path, constants.X_OK);
  }
  return paths;
}
