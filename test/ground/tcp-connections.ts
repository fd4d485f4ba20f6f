import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/**
 * establishedConnections counts the TCP connections process `pid` holds
 * open to `port` (on any address), read from /proc: the socket inodes among
 * its file descriptors, matched against the kernel's TCP tables of its
 * network namespace. Linux only, as the test ground is.
 */
export function establishedConnections(pid: number, port: number): number {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      // Closed between the listing and the read.
      continue;
    }
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode !== undefined) inodes.add(inode);
  }
  const remotePort = port.toString(16).toUpperCase().padStart(4, "0");
  let count = 0;
  for (const table of ["tcp", "tcp6"]) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address rem_address st ... inode: state 01 is ESTABLISHED.
      const [, , remote, state] = fields;
      if (state === "01" && remote?.endsWith(`:${remotePort}`) && inodes.has(fields[9] ?? "")) count++;
    }
  }
  return count;
}
