import { join } from "node:path";
import { note } from "./progress";

/**
 * buildGoAttacher returns the path of upstream's csi-attacher, built once by
 * bench/build-go-attacher.sh into the version-keyed cache (which honours
 * $BUN_CSI_ATTACHER_CACHE, so every bench script finds the same binary).
 */
export function buildGoAttacher(): string {
  note("building (or finding cached) upstream csi-attacher");
  const out = Bun.spawnSync(["bash", join(import.meta.dir, "..", "build-go-attacher.sh")], { stdout: "pipe", stderr: "inherit" });
  if (out.exitCode !== 0) throw new Error(`bench/build-go-attacher.sh exited with ${out.exitCode}`);
  return out.stdout.toString().trim();
}
