/**
 * The machine's one node ground. The kubelet and containerd fix their host
 * paths (host-paths.ts), so only one ground can run on a machine; the one
 * that runs holds a lock file naming its process (pid and start time, so
 * that a reused pid is not taken for it). A second ground fails at once,
 * naming the first one's process, rather than sharing its paths. A lock
 * whose process is gone, a ground killed before its stop (SIGKILL, a
 * crash), is taken over, and the new ground first removes what the dead
 * one left. The lock lives in /run, a tmpfs: a reboot clears it together
 * with the state it guards.
 *
 * This lock is the ground's own: CI and the project's helpers also
 * serialize their node runs with flock(1) on a file of their choosing,
 * which this lock neither needs nor waits for.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";

/** The lock file. */
export const nodeLockPath = "/run/bun-csi-attacher-node-ground.lock";

/** NodeLockHolder is the process a lock file names. */
export interface NodeLockHolder {
  readonly pid: number;
  /** True while that very process (same pid and start time) runs. */
  readonly alive: boolean;
  /** Its command line, when alive. */
  readonly command: string;
}

/** startTimeOf is field 22 of /proc/PID/stat (clock ticks since boot), undefined once the process is gone. */
function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command (field 2) is in parentheses and may hold spaces; field 22 is the 20th after it.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return "";
  }
}

/** What this process writes into the lock. */
function ownEntry(): string {
  return `${process.pid} ${startTimeOf(process.pid) ?? ""}\n`;
}

/** nodeLockHolder reads the lock: undefined when no ground holds it. */
export function nodeLockHolder(): NodeLockHolder | undefined {
  let entry: string;
  try {
    entry = readFileSync(nodeLockPath, "utf8");
  } catch (e: unknown) {
    if (e instanceof Error && "code" in e && e.code === "ENOENT") return undefined;
    throw e;
  }
  const [pidText = "", startTime = ""] = entry.trim().split(" ");
  const pid = Number(pidText);
  const alive = Number.isInteger(pid) && pid > 0 && startTime !== "" && startTimeOf(pid) === startTime;
  return { pid, alive, command: alive ? commandOf(pid) : "" };
}

/** heldBy is the message a second ground fails with. */
export function heldBy(holder: NodeLockHolder): string {
  return (
    `the node ground of process ${holder.pid} (${holder.command}) runs on this machine and holds ${nodeLockPath}: ` +
    `only one ground can run at a time (the kubelet's and containerd's host paths are fixed); wait until it stops, or stop it`
  );
}

/** NodeLock is this process's hold on the node ground. */
export class NodeLock {
  readonly #entry: string;

  private constructor(entry: string) {
    this.#entry = entry;
  }

  /**
   * take claims the ground for this process. Throws naming the holder when
   * a live ground holds it. A dead holder's lock is taken over; its pid is
   * returned so that the caller removes what that ground left.
   */
  static take(): { lock: NodeLock; deadHolder: number | undefined } {
    const entry = ownEntry();
    let deadHolder: number | undefined;
    // Twice at most: once as found, once after a dead holder's lock is removed.
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        writeFileSync(nodeLockPath, entry, { flag: "wx" });
        return { lock: new NodeLock(entry), deadHolder };
      } catch (e: unknown) {
        if (!(e instanceof Error && "code" in e && e.code === "EEXIST")) throw e;
      }
      const holder = nodeLockHolder();
      if (holder?.alive === true) throw new Error(heldBy(holder));
      deadHolder = holder?.pid;
      rmSync(nodeLockPath, { force: true });
    }
    throw new Error(`${nodeLockPath} was taken by another node ground starting at the same moment; run again once it stops`);
  }

  /** release gives the lock back, unless it is no longer this process's. Idempotent. */
  release(): void {
    try {
      if (readFileSync(nodeLockPath, "utf8") === this.#entry) rmSync(nodeLockPath, { force: true });
    } catch {
      // Gone already.
    }
  }
}
