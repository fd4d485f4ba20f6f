// Unix socket files outlive the process that made them when it is killed,
// and a later bind on the same path then fails with EADDRINUSE.
import { lstat, unlink } from "node:fs/promises";

/**
 * removeStaleSocket deletes a socket file left behind by an earlier run, so
 * a restarted driver can bind the same path. Anything that is not a socket
 * is left alone and reported, since deleting it would lose someone's file.
 */
export async function removeStaleSocket(path: string): Promise<void> {
  try {
    const stats = await lstat(path);
    if (!stats.isSocket()) {
      throw new Error(`${path} exists and is not a socket; refusing to replace it`);
    }
    await unlink(path);
  } catch (e: unknown) {
    if (isNotFound(e)) {
      return;
    }
    throw e;
  }
}

function isNotFound(e: unknown): boolean {
  return e instanceof Error && "code" in e && e.code === "ENOENT";
}
