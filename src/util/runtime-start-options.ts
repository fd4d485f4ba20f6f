/**
 * The runtime options the attacher starts with, beyond Bun's and
 * JavaScriptCore's own defaults. Bun reads them only from the environment
 * (`BUN_JSC_*` for JSC's), once, before the VM exists;
 * reexec-with-runtime-options.ts puts them there.
 *
 * - DFG and FTL off: for bursts of the size an attacher sees (tens to
 *   thousands of VolumeAttachments) the optimizing tiers cost more memory
 *   and CPU than they give back: measured with them off, the smallest
 *   container limit that held 30 VAs fell from 88 to 72 MiB. The LLInt and
 *   the Baseline JIT stay on.
 * - Bun's GC timer off: every second, idle or not, it read the process's
 *   RSS and ran a collection, waking the main thread and the GC helper
 *   about nine times a second on an attacher with nothing to do (1.6 ms of
 *   CPU a second, against 0.6 ms without it). JSC still collects as the
 *   heap grows, and the attacher's IdleCollector collects fully once a
 *   burst of work is over, which is when garbage is left behind.
 * - The RAM size JSC sizes its heap by, when the memory limit binds on an
 *   ancestor cgroup only (a pod-level limit, a limited parent slice): Bun
 *   sets it from the process's own group's limit, and misses that case,
 *   checked on cgroup v1 (process.constrainedMemory() then says the
 *   machine's RAM, and the heap grows as on an unlimited machine).
 *
 * An option the environment already names is the operator's choice and is
 * kept as it is.
 */

/**
 * Our default runtime options; an operator's value in the environment wins over
 * each. The image's config carries them too (scripts/image.ts), so that in a
 * container the attacher starts once instead of executing itself again.
 */
export const defaultRuntimeOptions: Readonly<Record<string, string>> = {
  BUN_JSC_useDFGJIT: "0",
  BUN_JSC_useFTLJIT: "0",
  BUN_GC_TIMER_DISABLE: "1",
};

/** The variable that sizes JSC's heap heuristics, in bytes. */
const ramSizeOption = "BUN_JSC_forceRAMSize";

/** What start-up knows about memory when it chooses the options. */
export interface MemoryFacts {
  /** The smallest limit of the process's memory cgroup and its ancestors (cgroup-memory-limit.ts), undefined when none is set or none is visible. */
  readonly limitBytes: number | undefined;
  /** What the runtime took as the RAM it may use (process.constrainedMemory()): its own cgroup's limit, or the machine's RAM. */
  readonly runtimeRamBytes: number;
}

/**
 * runtimeOptionsToAdd are the options `env` lacks, to be set before the VM
 * starts; empty when nothing needs adding (the operator named them, or this
 * is the image that was re-executed with them).
 */
export function runtimeOptionsToAdd(env: Readonly<Record<string, string | undefined>>, memory: MemoryFacts): Record<string, string> {
  const add: Record<string, string> = {};
  for (const [name, value] of Object.entries(defaultRuntimeOptions)) {
    if (env[name] === undefined) add[name] = value;
  }
  if (env[ramSizeOption] === undefined && memory.limitBytes !== undefined && memory.limitBytes < memory.runtimeRamBytes) {
    add[ramSizeOption] = String(memory.limitBytes);
  }
  return add;
}
