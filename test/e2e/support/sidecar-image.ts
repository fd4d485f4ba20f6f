/**
 * The sidecar image as the tests use it: built by `bun run image` from the
 * binary the other end-to-end tests run, and read back with skopeo and umoci
 * as a consumer of the archive would.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { crossTargets, defaultOutfile } from "../../../scripts/build/build-targets";
import { attacherBinary } from "../../ground/attacher-process";
import type { ImageConfig } from "../../ground/container-run-spec";
import { parseRuntimeConfig, type RuntimeConfig } from "./runc-bundle";

const repositoryRoot = join(import.meta.dir, "../../..");

/** run runs a command to completion and returns its stdout, or throws with its stderr. */
export function run(command: readonly string[], cwd: string = repositoryRoot): string {
  const result = Bun.spawnSync([...command], { cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`${command.join(" ")} exited ${result.exitCode}:\n${result.stdout.toString()}${result.stderr.toString()}`);
  return result.stdout.toString();
}

/** crossBinaries are the binaries `bun run build -- --target=...` wrote for the CPUs other than this one, by OCI architecture. */
export const crossBinaries: Readonly<Record<string, string>> = Object.fromEntries(
  crossTargets().map((target) => [target.architecture, join(repositoryRoot, defaultOutfile(target))]),
);

/**
 * buildSidecarImage runs `bun run image` on dist/csi-attacher and the
 * cross-compiled binaries, writing the archive to `out`. It never rebuilds
 * a binary: other test files may be running them at this moment.
 */
export function buildSidecarImage(out: string): string {
  if (!existsSync(attacherBinary)) throw new Error(`${attacherBinary} is missing: run \`bun run build\` first`);
  for (const [architecture, binary] of Object.entries(crossBinaries)) {
    if (!existsSync(binary)) throw new Error(`${binary} is missing: run \`bun run build -- --target=linux/${architecture}\` first (bun run test does)`);
  }
  const crossFlags = Object.entries(crossBinaries).map(([architecture, binary]) => `--binary-${architecture}=${binary}`);
  return run([process.execPath, "run", "scripts/image.ts", `--binary=${attacherBinary}`, ...crossFlags, `--out=${out}`]);
}

/** skopeoPlatform is skopeo's flags choosing `architecture`'s manifest of the index (default: this machine's). */
function skopeoPlatform(architecture: string | undefined): string[] {
  return architecture === undefined ? [] : [`--override-arch=${architecture}`];
}

/** skopeoInspect is `skopeo inspect` of an archive: the index digest, and the labels and layers of one platform's image. */
export function skopeoInspect(archive: string, architecture?: string): { Digest: string; Architecture: string; Labels: Record<string, string> | null; Layers: string[] } {
  return JSON.parse(run(["skopeo", ...skopeoPlatform(architecture), "inspect", `oci-archive:${archive}`])) as { Digest: string; Architecture: string; Labels: Record<string, string> | null; Layers: string[] };
}

/** imageConfigOf is the archive's image config (`.config` of the OCI config blob) of one platform. */
export function imageConfigOf(archive: string, architecture?: string): ImageConfig & { Labels?: Record<string, string> } {
  return (JSON.parse(run(["skopeo", ...skopeoPlatform(architecture), "inspect", "--config", `oci-archive:${archive}`])) as { config: ImageConfig & { Labels?: Record<string, string> } }).config;
}

/** UnpackedImage is an image unpacked into a runc bundle by umoci. */
export interface UnpackedImage {
  /** The bundle's root file system. */
  readonly rootfs: string;
  /** The runtime config umoci derived from the image config. */
  readonly config: RuntimeConfig;
}

/**
 * unpackImage copies one platform's image (default: this machine's) out of
 * the archive into an OCI layout with skopeo and unpacks it with umoci into
 * `dir/bundle` (as root, so owners are the image's).
 */
export function unpackImage(archive: string, dir: string, architecture?: string): UnpackedImage {
  const layout = join(dir, "layout");
  const bundle = join(dir, "bundle");
  mkdirSync(dir, { recursive: true });
  run(["skopeo", ...skopeoPlatform(architecture), "copy", "--quiet", `oci-archive:${archive}`, `oci:${layout}:image`]);
  run(["umoci", "unpack", "--image", `${layout}:image`, bundle]);
  return { rootfs: join(bundle, "rootfs"), config: parseRuntimeConfig(JSON.parse(readFileSync(join(bundle, "config.json"), "utf8"))) };
}

/**
 * imageGroundProblem says why this machine cannot build and unpack the
 * image for the tests, or undefined if it can. The tests fail with this
 * sentence rather than skip.
 */
export function imageGroundProblem(): string | undefined {
  if (process.getuid?.() !== 0) return "the image tests unpack the image with its owners (umoci unpack) and need root (CI runs as root)";
  const missing = ["umoci", "skopeo"].filter((tool) => Bun.which(tool) === null);
  if (missing.length > 0) return `the image tests need ${missing.join(", ")}: apt-get install -y --no-install-recommends ${missing.join(" ")} (.ci/run does)`;
  const emulators = crossTargets().filter((target) => Bun.which(target.qemuUserStatic) === null).map((target) => target.qemuUserStatic);
  if (emulators.length > 0) return `the image build runs each other CPU's binary under ${emulators.join(", ")}: apt-get install -y --no-install-recommends qemu-user-static (.ci/run does)`;
  return undefined;
}
