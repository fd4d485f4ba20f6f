import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/**
 * listeningTcpPorts lists the TCP ports process `pid` listens on, the way
 * `ss -ltnp` finds them: the socket inodes among its open descriptors,
 * matched against the LISTEN entries (state 0A) of /proc/<pid>/net/tcp and
 * tcp6 (which list every socket of its network namespace, not only its own).
 */
export function listeningTcpPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch (e: unknown) {
      // A descriptor closed between readdir and readlink is simply not a socket any more.
      if ((e as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw e;
    }
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode !== undefined) inodes.add(inode);
  }
  const ports = new Set<number>();
  for (const table of ["tcp", "tcp6"]) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, "utf8").split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      const [localAddress, state, inode] = [fields[1], fields[3], fields[9]];
      if (state !== "0A" || inode === undefined || !inodes.has(inode) || localAddress === undefined) continue;
      ports.add(Number.parseInt(localAddress.slice(localAddress.lastIndexOf(":") + 1), 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}
