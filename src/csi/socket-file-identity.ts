import { statSync } from "node:fs";

/**
 * socketFileIdentity names the file at `path` as the filesystem knows it,
 * or undefined when there is none. A driver that starts binds its socket
 * as a new file, even on the same path, so two different identities under
 * one path are two different drivers, whether or not the second answers.
 *
 * The inode number alone does not tell them apart: ext4 gives a file bound
 * right after the old one was unlinked the same number (checked: five binds
 * in a row, one number). The birth time does, and nothing done to the file
 * afterwards (a chmod by the driver) changes it, as it would the change
 * time. Where the filesystem keeps no birth time, the device and inode are
 * all there is: a restart may then go unnoticed, but nothing is ever taken
 * for one.
 */
export function socketFileIdentity(path: string): string | undefined {
  try {
    const stats = statSync(path, { bigint: true, throwIfNoEntry: false });
    if (stats === undefined) return undefined;
    return stats.birthtimeNs > 0n ? `${stats.dev}:${stats.ino}:${stats.birthtimeNs}` : `${stats.dev}:${stats.ino}`;
  } catch (e: unknown) {
    // A path that cannot be looked at (a directory on the way gone, no permission) names no file either.
    if (e instanceof Error && "code" in e) return undefined;
    throw e;
  }
}
