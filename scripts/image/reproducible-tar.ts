import { readdirSync } from "node:fs";
import { runTool } from "./run-tool";

/** Options of {@link writeReproducibleTar}. */
export interface ReproducibleTarOptions {
  /** The directory whose contents become the archive's root. */
  readonly root: string;
  /** The archive to write (uncompressed: umoci compresses layers itself). */
  readonly file: string;
  /** Every entry's mtime, in seconds since the epoch (SOURCE_DATE_EPOCH). */
  readonly mtime: number;
  /** Paths (relative to `root`, no leading slash) owned by `otherOwner` instead of root. */
  readonly otherOwned?: readonly string[];
  /** The numeric uid and gid of `otherOwned`. */
  readonly otherOwner?: number;
}

/**
 * writeReproducibleTar archives a directory with GNU tar so that the same
 * files give the same bytes on any machine and at any time: entries sorted
 * by name, one fixed mtime, numeric owners (root, or `otherOwner` for
 * `otherOwned`, appended last) and no user or group names, the GNU format
 * (which records no atime or ctime). Modes are the files' own: the caller
 * sets them.
 */
export function writeReproducibleTar(options: ReproducibleTarOptions): void {
  const common = ["--format=gnu", "--sort=name", `--mtime=@${options.mtime}`, "--numeric-owner", "--no-acls", "--no-xattrs", "--no-selinux", `--directory=${options.root}`, `--file=${options.file}`];
  const otherOwned = options.otherOwned ?? [];
  const members = readdirSync(options.root).sort();
  if (members.length === 0) throw new Error(`${options.root} is empty: nothing to archive`);
  runTool(["tar", "--create", ...common, "--owner=0", "--group=0", ...otherOwned.map((path) => `--exclude=${path}`), "--", ...members]);
  if (otherOwned.length === 0) return;
  const owner = options.otherOwner;
  if (owner === undefined) throw new Error("writeReproducibleTar: otherOwned given without otherOwner");
  runTool(["tar", "--append", ...common, `--owner=${owner}`, `--group=${owner}`, "--", ...[...otherOwned].sort()]);
}
