import { statSync } from "node:fs";

/**
 * socketFileIdentity names the file at `path` as the filesystem knows it
 * (its device and inode), or undefined when there is none. A driver that
 * starts binds its socket as a new file, even on the same path, so two
 * different identities under one path are two different drivers, whether
 * or not the second one answers.
 */
export function socketFileIdentity(path: string): string | undefined {
  try {
    const stats = statSync(path, { throwIfNoEntry: false });
    return stats === undefined ? undefined : `${stats.dev}:${stats.ino}`;
  } catch (e: unknown) {
    // A path that cannot be looked at (a directory on the way gone, no permission) names no file either.
    if (e instanceof Error && "code" in e) return undefined;
    throw e;
  }
}
