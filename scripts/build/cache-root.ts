/**
 * The cache outside the repository that builds, tests and the bench share:
 * the test ground's Go builds (test/ground/build-components.sh), upstream's
 * attacher (bench/build-go-attacher.sh), the Bun runtimes cross-compiling
 * needs, and the image's .deb files. Those shell scripts spell the same rule.
 */
import { homedir } from "node:os";
import { join } from "node:path";

/**
 * cacheRoot is $BUN_CSI_ATTACHER_CACHE, else $XDG_CACHE_HOME/bun-csi-attacher,
 * else ~/.cache/bun-csi-attacher, as the shell's
 * `${BUN_CSI_ATTACHER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bun-csi-attacher}`:
 * an empty variable counts as unset there (and, for XDG_CACHE_HOME, in the
 * XDG spec), hence `||`.
 */
export function cacheRoot(env: Readonly<Record<string, string | undefined>> = process.env): string {
  return env["BUN_CSI_ATTACHER_CACHE"] || join(env["XDG_CACHE_HOME"] || join(homedir(), ".cache"), "bun-csi-attacher");
}
