/**
 * Finds the memory limit of the cgroup this process runs in (a container's
 * `resources.limits.memory`), for cgroup v1 and v2. JavaScriptCore sizes its
 * heap from the machine's RAM, not from the container's limit, so the
 * attacher needs to know the limit itself to stay inside it.
 *
 * Everything here is pure except `readOwnMemoryCgroup`, which is given a
 * file reader so that the walk over the cgroup files is tested without a
 * cgroup.
 */
import { readFileSync } from "node:fs";

/** Limits at or above this are "no limit": v1 writes 2^63 rounded down to a page (9223372036854771712). */
const unlimitedFrom = 2 ** 62;

/** MountEntry is the part of one /proc/self/mountinfo line that locates a cgroup hierarchy. */
export interface MountEntry {
  /** The directory of the hierarchy that is mounted (field 4): "/" unless only a subtree is visible. */
  readonly root: string;
  readonly mountPoint: string;
  readonly fsType: string;
  /** Super options (the last field): for cgroup v1, which controllers the hierarchy carries. */
  readonly superOptions: readonly string[];
}

/** parseMountinfo reads /proc/self/mountinfo: `id parent major:minor root mountpoint options [optional...] - fstype source superoptions`. */
export function parseMountinfo(text: string): MountEntry[] {
  const entries: MountEntry[] = [];
  for (const line of text.split("\n")) {
    const fields = line.split(" ");
    const separator = fields.indexOf("-");
    // A line needs at least the five fixed fields before the separator and three after it.
    if (separator < 6 || fields.length < separator + 4) continue;
    entries.push({
      root: unescapeMountPath(fields[3] ?? ""),
      mountPoint: unescapeMountPath(fields[4] ?? ""),
      fsType: fields[separator + 1] ?? "",
      superOptions: (fields[separator + 3] ?? "").split(","),
    });
  }
  return entries;
}

/** The kernel writes space, tab, newline and backslash in mount paths as octal escapes (\040). */
function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/** ProcCgroupPaths are this process's cgroup paths from /proc/self/cgroup. */
export interface ProcCgroupPaths {
  /** The path in the v1 hierarchy that carries the memory controller, when there is one. */
  readonly v1Memory?: string;
  /** The path in the v2 (unified) hierarchy, the `0::` line. */
  readonly v2?: string;
}

/** parseProcCgroup reads /proc/self/cgroup: `id:controllers:path` per hierarchy; v2 is `0::path`. */
export function parseProcCgroup(text: string): ProcCgroupPaths {
  let v1Memory: string | undefined;
  let v2: string | undefined;
  for (const line of text.split("\n")) {
    const first = line.indexOf(":");
    const second = line.indexOf(":", first + 1);
    if (first < 0 || second < 0) continue;
    const id = line.slice(0, first);
    const controllers = line.slice(first + 1, second);
    const path = line.slice(second + 1);
    if (id === "0" && controllers === "") v2 = path;
    else if (controllers.split(",").includes("memory")) v1Memory = path;
  }
  return { ...(v1Memory === undefined ? {} : { v1Memory }), ...(v2 === undefined ? {} : { v2 }) };
}

/** MemoryCgroup is where this process's memory cgroup is in the filesystem. */
export interface MemoryCgroup {
  readonly version: 1 | 2;
  /** The cgroup's directory, e.g. /sys/fs/cgroup/memory/kubepods/pod1/abc or /sys/fs/cgroup. */
  readonly dir: string;
  /** The hierarchy's mount point: walking up to ancestors stops here. */
  readonly mountPoint: string;
}

/**
 * locateMemoryCgroup joins /proc/self/cgroup with the mounts. The memory
 * controller sits on one hierarchy only: a v1 line naming it wins, else the
 * unified one. Inside a container with its own cgroup namespace the path is
 * "/" and the mount's root is "/"; without one (older runtimes) both name
 * the same host path, so the mount's root is cut off the path.
 */
export function locateMemoryCgroup(paths: ProcCgroupPaths, mounts: readonly MountEntry[]): MemoryCgroup | undefined {
  if (paths.v1Memory !== undefined) {
    const mount = mounts.find((m) => m.fsType === "cgroup" && m.superOptions.includes("memory"));
    if (mount !== undefined) return { version: 1, dir: joinUnderMount(mount, paths.v1Memory), mountPoint: mount.mountPoint };
  }
  if (paths.v2 !== undefined) {
    const mount = mounts.find((m) => m.fsType === "cgroup2");
    if (mount !== undefined) return { version: 2, dir: joinUnderMount(mount, paths.v2), mountPoint: mount.mountPoint };
  }
  return undefined;
}

function joinUnderMount(mount: MountEntry, cgroupPath: string): string {
  const root = mount.root === "/" ? "" : mount.root;
  // A path outside the mounted subtree cannot be reached: the mount point is the closest we see.
  if (root !== "" && cgroupPath !== root && !cgroupPath.startsWith(`${root}/`)) return mount.mountPoint;
  const relative = cgroupPath.slice(root.length).replace(/\/+$/, "");
  return `${mount.mountPoint.replace(/\/+$/, "")}${relative}`;
}

/** parseLimitBytes reads a limit file's content: a byte count, or "max" (v2) / a near-2^63 value (v1) for none. */
export function parseLimitBytes(text: string): number | undefined {
  const value = text.trim();
  if (value === "max" || value === "") return undefined;
  const bytes = Number(value);
  if (!Number.isFinite(bytes) || bytes <= 0 || bytes >= unlimitedFrom) return undefined;
  return bytes;
}

/** parseHierarchicalLimit reads `hierarchical_memory_limit` from a v1 memory.stat: the smallest limit of the group and its ancestors. */
export function parseHierarchicalLimit(memoryStat: string): number | undefined {
  const match = /^hierarchical_memory_limit (\d+)$/m.exec(memoryStat);
  return match?.[1] === undefined ? undefined : parseLimitBytes(match[1]);
}

/** ReadFile returns a file's content, or undefined when it cannot be read. */
export type ReadFile = (path: string) => string | undefined;

/** MemoryLimit is what start-up found: the cgroup, and its limit when one is set. */
export interface MemoryLimit {
  readonly cgroup: MemoryCgroup;
  /** The smallest limit of the cgroup and its ancestors; undefined when none is set. */
  readonly limitBytes: number | undefined;
}

/**
 * memoryLimitOf reads the limit of `cgroup`. A limit set on an ancestor
 * binds too (a pod's limit sits one level above its containers'): v1 says
 * so in memory.stat, on v2 each directory up to the mount is read.
 */
export function memoryLimitOf(cgroup: MemoryCgroup, read: ReadFile): MemoryLimit {
  const limits: (number | undefined)[] = [];
  if (cgroup.version === 1) {
    const own = read(`${cgroup.dir}/memory.limit_in_bytes`);
    const stat = read(`${cgroup.dir}/memory.stat`);
    limits.push(own === undefined ? undefined : parseLimitBytes(own), stat === undefined ? undefined : parseHierarchicalLimit(stat));
  } else {
    for (let dir = cgroup.dir; dir.length >= cgroup.mountPoint.length; dir = parentDir(dir)) {
      const max = read(`${dir}/memory.max`);
      if (max !== undefined) limits.push(parseLimitBytes(max));
      if (dir === cgroup.mountPoint) break;
    }
  }
  const set = limits.filter((limit): limit is number => limit !== undefined);
  return { cgroup, limitBytes: set.length === 0 ? undefined : Math.min(...set) };
}

function parentDir(dir: string): string {
  const cut = dir.lastIndexOf("/");
  return cut <= 0 ? "/" : dir.slice(0, cut);
}

/** readFileOrUndefined is the ReadFile of the real filesystem. */
export const readFileOrUndefined: ReadFile = (path) => {
  try {
    return readFileSync(path, "utf8");
  } catch (e: unknown) {
    // No such file, or not readable (no cgroup filesystem mounted, a v2 root without memory.max): nothing to read there.
    if (e instanceof Error && "code" in e) return undefined;
    throw e;
  }
};

/** readOwnMemoryLimit finds this process's memory cgroup and its limit; undefined when no memory cgroup is visible (not Linux, no cgroup mount). */
export function readOwnMemoryLimit(read: ReadFile = readFileOrUndefined): MemoryLimit | undefined {
  const procCgroup = read("/proc/self/cgroup");
  const mountinfo = read("/proc/self/mountinfo");
  if (procCgroup === undefined || mountinfo === undefined) return undefined;
  const cgroup = locateMemoryCgroup(parseProcCgroup(procCgroup), parseMountinfo(mountinfo));
  return cgroup === undefined ? undefined : memoryLimitOf(cgroup, read);
}

/**
 * memoryLimitFields are the log fields of what start-up found: which cgroup,
 * its limit in bytes ("none" when unset or no cgroup is visible), and the
 * runtime arguments the binary runs with (`--smol` when baked in), so a log
 * says whether the heap was sized for a small container.
 */
export function memoryLimitFields(limit: MemoryLimit | undefined, execArgv: readonly string[]): Record<string, string | number> {
  const runtime = { execArgv: execArgv.join(" ") };
  if (limit === undefined) return { limit: "none", cgroup: "not found", ...runtime };
  return { limit: limit.limitBytes ?? "none", cgroup: limit.cgroup.dir, cgroupVersion: limit.cgroup.version, ...runtime };
}
