/**
 * A memory cgroup of its own for one process, as a container runtime gives
 * a container: cgroup v1 (`memory.limit_in_bytes`, `memory.max_usage_in_bytes`,
 * `oom_kill` in `memory.oom_control`) or v2 (`memory.max`, `memory.peak`,
 * `oom_kill` in `memory.events`), whichever hierarchy carries the memory
 * controller here. Used by the container-limit scenario and the tight-limit
 * end-to-end test. Needs root and a writable cgroup filesystem; `whyUnusable`
 * says what is missing otherwise.
 */
import { accessSync, constants, existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { locateMemoryCgroup, parseMountinfo, parseProcCgroup } from "../../src/util/cgroup-memory-limit";
import type { CommandWrapper } from "./managed-process";

/** Hierarchy is where new memory groups are made. */
export interface Hierarchy {
  readonly version: 1 | 2;
  /** The hierarchy's mount point; groups are made directly under it. */
  readonly root: string;
}

/** findHierarchy locates the hierarchy carrying the memory controller, from this process's view of the mounts. */
export function findHierarchy(): Hierarchy | undefined {
  let procCgroup: string;
  let mountinfo: string;
  try {
    procCgroup = readFileSync("/proc/self/cgroup", "utf8");
    mountinfo = readFileSync("/proc/self/mountinfo", "utf8");
  } catch (e: unknown) {
    if (e instanceof Error && "code" in e) return undefined;
    throw e;
  }
  const cgroup = locateMemoryCgroup(parseProcCgroup(procCgroup), parseMountinfo(mountinfo));
  return cgroup === undefined ? undefined : { version: cgroup.version, root: cgroup.mountPoint };
}

/**
 * whyUnusable says what keeps this machine from running a process in a
 * memory cgroup of its own, or undefined when nothing does.
 */
export function whyUnusable(hierarchy = findHierarchy()): string | undefined {
  if (process.getuid?.() !== 0) return "not root: making a memory cgroup and dropping the page cache need uid 0";
  if (hierarchy === undefined) return "no cgroup hierarchy carries the memory controller (/proc/self/cgroup names none, or no cgroup filesystem is mounted)";
  try {
    accessSync(hierarchy.root, constants.W_OK);
  } catch (e: unknown) {
    return `the cgroup hierarchy at ${hierarchy.root} is not writable (${e instanceof Error ? e.message : String(e)})`;
  }
  if (hierarchy.version === 2 && !readFileSync(`${hierarchy.root}/cgroup.controllers`, "utf8").split(/\s+/).includes("memory")) {
    return `the cgroup v2 hierarchy at ${hierarchy.root} does not offer the memory controller`;
  }
  try {
    accessSync("/proc/sys/vm/drop_caches", constants.W_OK);
  } catch (e: unknown) {
    return `/proc/sys/vm/drop_caches is not writable (${e instanceof Error ? e.message : String(e)}): the binary's pages could not be charged to the group`;
  }
  return undefined;
}

/** parseOomKills reads the `oom_kill N` line of v1's memory.oom_control or v2's memory.events (0 when the kernel predates the field). */
export function parseOomKills(text: string): number {
  const match = /^oom_kill (\d+)$/m.exec(text);
  return match?.[1] === undefined ? 0 : Number(match[1]);
}

/** ChargeSplit is a group's charge by kind, in bytes. */
export interface ChargeSplit {
  readonly fileBytes: number;
  readonly anonBytes: number;
}

/** MemoryGroup is one memory cgroup, made for one process and removed after it. */
export class MemoryGroup {
  readonly dir: string;

  private constructor(
    readonly hierarchy: Hierarchy,
    name: string,
  ) {
    this.dir = `${hierarchy.root}/${name}`;
  }

  /** create makes the group (empty, no limit); throws with `whyUnusable`'s answer where that is impossible. */
  static create(name: string): MemoryGroup {
    const hierarchy = findHierarchy();
    const missing = whyUnusable(hierarchy);
    if (missing !== undefined || hierarchy === undefined) throw new Error(`cannot run a process in a memory cgroup here: ${missing ?? "no hierarchy"}`);
    // v2 hands the memory controller to children only when the parent's subtree_control names it.
    if (hierarchy.version === 2 && !readFileSync(`${hierarchy.root}/cgroup.subtree_control`, "utf8").includes("memory")) {
      writeFileSync(`${hierarchy.root}/cgroup.subtree_control`, "+memory");
    }
    const group = new MemoryGroup(hierarchy, name);
    if (!existsSync(group.dir)) mkdirSync(group.dir);
    group.setLimit(undefined);
    return group;
  }

  /** setLimit sets the hard limit (page cache included, as a container's); undefined: none. Swap is kept out on v2 so a limit means RAM. */
  setLimit(bytes: number | undefined): void {
    if (this.hierarchy.version === 1) {
      this.write("memory.limit_in_bytes", bytes === undefined ? "-1" : String(bytes));
    } else {
      this.write("memory.max", bytes === undefined ? "max" : String(bytes));
      if (existsSync(`${this.dir}/memory.swap.max`)) this.write("memory.swap.max", "0");
    }
  }

  /** usageBytes is the group's charge now, page cache included. */
  usageBytes(): number {
    return Number(this.read(this.hierarchy.version === 1 ? "memory.usage_in_bytes" : "memory.current").trim());
  }

  /**
   * peakBytes is the highest charge since the group was made
   * (v2 before kernel 5.19 has no memory.peak: then the current usage).
   */
  peakBytes(): number {
    if (this.hierarchy.version === 1) return Number(this.read("memory.max_usage_in_bytes").trim());
    return existsSync(`${this.dir}/memory.peak`) ? Number(this.read("memory.peak").trim()) : this.usageBytes();
  }

  /**
   * chargeSplit is the group's charge now by kind (memory.stat): page cache
   * and other file pages, the binary's among them (v1 `cache`, v2 `file`),
   * and anonymous pages (v1 `rss`, v2 `anon`). Kernel memory is in neither.
   */
  chargeSplit(): ChargeSplit {
    const stat = this.read("memory.stat");
    const field = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, "m").exec(stat)?.[1] ?? Number.NaN);
    return this.hierarchy.version === 1 ? { fileBytes: field("cache"), anonBytes: field("rss") } : { fileBytes: field("file"), anonBytes: field("anon") };
  }

  /** oomKills counts processes the kernel's OOM killer ended in this group. */
  oomKills(): number {
    return parseOomKills(this.read(this.hierarchy.version === 1 ? "memory.oom_control" : "memory.events"));
  }

  /**
   * wrapper makes a program join the group before it execs: every page it
   * touches from its first instruction is charged here. The pid stays the
   * same through the exec.
   */
  wrapper(): CommandWrapper {
    return ["/bin/sh", "-c", `echo $$ > '${this.dir}/cgroup.procs' && exec "$@"`, "sh"];
  }

  /** remove deletes the group once its processes are gone; its page cache is handed to the parent. */
  remove(): void {
    if (existsSync(this.dir)) rmdirSync(this.dir);
  }

  private read(file: string): string {
    return readFileSync(`${this.dir}/${file}`, "utf8");
  }

  private write(file: string, value: string): void {
    writeFileSync(`${this.dir}/${file}`, value);
  }
}

/**
 * dropPageCache writes back dirty pages, then drops the clean page cache, so
 * the next process to read a binary loads its pages again and they are
 * charged to that process's group, as in a fresh container.
 */
export function dropPageCache(): void {
  Bun.spawnSync(["sync"]);
  writeFileSync("/proc/sys/vm/drop_caches", "3");
}
