/**
 * image builds the csi-attacher sidecar image without a container engine:
 * the binary on a distroless-like base made of pinned Debian packages, for
 * linux/amd64 and linux/arm64, written as dist/csi-attacher-image.tar: an OCI
 * archive holding one image index with both platforms' manifests, which
 * docker, podman, skopeo and containerd (k3s) load, each picking the
 * platform of the machine it runs on.
 *
 *   bun run image                      # build both binaries, then the image
 *   bun run image --binary=PATH        # this machine's CPU's binary, already built
 *   bun run image --binary-arm64=PATH  # (or --binary-amd64) a platform's binary, already built
 *   bun run image --out=FILE           # write the archive elsewhere
 *   bun run image --update-pins        # re-pin the base to apt's current versions, every platform
 *
 * The same binaries, lock file and SOURCE_DATE_EPOCH (default: the HEAD
 * commit's time) give the same index digest. deploy/Dockerfile builds the
 * same layout with Docker (buildx for both platforms), on gcr.io's
 * distroless base.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import packageJson from "../package.json" with { type: "json" };
import { buildTargets, crossTargets, defaultOutfile, hostTarget, type BuildTarget } from "./build/build-targets";
import { basePackages, nonrootId, nonrootOwnedPaths, stageBaseRootfs } from "./image/base-rootfs";
import { ImageBuildError } from "./image/errors";
import { writeImageArchive } from "./image/image-archive";
import { binaryIdentity, imageName, qualifiedImageName, sourceDateEpoch, type BinaryIdentity } from "./image/image-identity";
import { writeOciLayout, type PlatformImage } from "./image/oci-layout";
import { writePlatformIndex } from "./image/platform-index";
import { debCache, ensureDpkgArchitecture, fetchPinnedPackage, packageLockPath, parsePackageLock, pinFor, updatePins, type PackageLock } from "./image/pinned-packages";
import { emulatorTools, ensureTools, requiredTools } from "./image/required-tools";
import { writeReproducibleTar } from "./image/reproducible-tar";
import { runTool } from "./image/run-tool";
import { defaultRuntimeOptions } from "../src/util/runtime-start-options";

const { values: options } = parseArgs({
  options: {
    binary: { type: "string" },
    "binary-amd64": { type: "string" },
    "binary-arm64": { type: "string" },
    out: { type: "string", default: "dist/csi-attacher-image.tar" },
    "update-pins": { type: "boolean", default: false },
  },
  strict: true,
});

/** rfc3339 spells seconds since the epoch as umoci's --created wants them. */
/**
 * The config's environment. PATH is the one containerd and Docker give an
 * image whose config names no variable (naming any takes that default
 * away); the runtime options let the attacher start once in a container instead
 * of executing itself again to set them (about 100 ms of its start under
 * load). A container's own env still overrides each.
 */
const imageEnvironment: Readonly<Record<string, string>> = {
  PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  ...defaultRuntimeOptions,
};

function rfc3339(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

const host = hostTarget();

/** binaryFor is the binary of `target`: given by flag, or built now by scripts/build.ts. */
function binaryFor(target: BuildTarget): string {
  const perPlatform: Readonly<Record<string, string | undefined>> = { amd64: options["binary-amd64"], arm64: options["binary-arm64"] };
  const given = perPlatform[target.architecture] ?? (target === host ? options.binary : undefined);
  if (given !== undefined) {
    if (!existsSync(given)) throw new ImageBuildError(`${given} does not exist: run \`bun run build${target === host ? "" : ` -- --target=${target.platform}`}\`, or leave out its flag`);
    return given;
  }
  const build = target === host ? [] : [`--target=${target.platform}`];
  const outfile = target === host ? "dist/csi-attacher" : defaultOutfile(target);
  console.log(runTool([process.execPath, "run", "scripts/build.ts", ...build], { env: { ATTACHER_OUTFILE: outfile } }).trim());
  return outfile;
}

/**
 * identityOf asks the binary for its version, commit and platform: at once
 * on its own CPU, else under QEMU with the staged base as its root for the
 * loader and libc, which also checks that the base holds what that binary
 * needs to start.
 */
function identityOf(target: BuildTarget, binary: string, base: string): BinaryIdentity {
  const identity = target === host ? binaryIdentity(binary) : binaryIdentity(binary, [target.qemuUserStatic, "-L", base]);
  if (identity.platform !== target.platform) throw new ImageBuildError(`${binary} says it is built for ${identity.platform}, not ${target.platform}: give each --binary-<arch> the binary of that CPU`);
  return identity;
}

/** PlatformBuild is one platform's part of the image: its layers' tar files and its binary's identity. */
interface PlatformBuild {
  readonly target: BuildTarget;
  readonly identity: BinaryIdentity;
  readonly baseTar: string;
  readonly appTar: string;
  readonly pins: readonly string[];
}

/** buildPlatform stages one platform's base and app layers under `work`. */
function buildPlatform(target: BuildTarget, lock: PackageLock, work: string, epoch: number): PlatformBuild {
  const architecture = target.architecture;
  ensureDpkgArchitecture(architecture);
  const debOf = (name: string) => fetchPinnedPackage(pinFor(lock, name, architecture), debCache);
  const debs = { baseFiles: debOf("base-files"), libc6: debOf("libc6"), caCertificates: debOf("ca-certificates") };
  const binary = binaryFor(target);

  const base = join(work, `base-${architecture}`);
  mkdirSync(base);
  stageBaseRootfs(base, debs, work);
  const identity = identityOf(target, binary, base);
  const baseTar = join(work, `base-${architecture}.tar`);
  writeReproducibleTar({ root: base, file: baseTar, mtime: epoch, otherOwned: nonrootOwnedPaths, otherOwner: nonrootId });
  const app = join(work, `app-${architecture}`);
  mkdirSync(app);
  chmodSync(app, 0o755);
  copyFileSync(binary, join(app, "csi-attacher"));
  chmodSync(join(app, "csi-attacher"), 0o755);
  const appTar = join(work, `app-${architecture}.tar`);
  writeReproducibleTar({ root: app, file: appTar, mtime: epoch });
  const pins = basePackages.map((name) => pinFor(lock, name, architecture)).map((pin) => `${pin.name} ${pin.version}`);
  return { target, identity, baseTar, appTar, pins };
}

function build(): void {
  const started = performance.now();
  ensureTools({ ...requiredTools, ...emulatorTools(crossTargets().map((target) => target.qemuUserStatic)) });
  if (options["update-pins"]) {
    let lock: PackageLock | undefined;
    for (const target of buildTargets) {
      ensureDpkgArchitecture(target.architecture);
      lock = updatePins(packageLockPath, basePackages, target.architecture, debCache);
    }
    for (const pin of lock?.packages ?? []) console.log(`pinned ${pin.name} ${pin.version} (${pin.architecture}) sha256 ${pin.sha256}`);
    console.log(`wrote ${packageLockPath}: review and commit it`);
    return;
  }
  const lock = parsePackageLock(readFileSync(packageLockPath, "utf8"));
  const epoch = sourceDateEpoch();
  const created = rfc3339(epoch);

  const work = mkdtempSync(join(tmpdir(), "csi-attacher-image-"));
  try {
    const platforms = buildTargets.map((target) => buildPlatform(target, lock, work, epoch));
    // One index is one source: every platform's binary must say the same version and commit.
    const sources = new Set(platforms.map((platform) => `${platform.identity.version} (commit ${platform.identity.commit})`));
    if (sources.size !== 1) throw new ImageBuildError(`the binaries were built from different sources (${[...sources].join(", ")}): build them from one tree`);

    const images = platforms.map(({ target, identity, baseTar, appTar, pins }): PlatformImage => ({
      tag: target.architecture,
      architecture: target.architecture,
      layers: [
        { tar: baseTar, createdBy: `bun run image: distroless-like base from Debian ${pins.join(", ")} (${target.architecture})` },
        { tar: appTar, createdBy: `bun run image: /csi-attacher ${identity.version} (commit ${identity.commit}, ${identity.platform})` },
      ],
      labels: {
        "org.opencontainers.image.title": "bun-csi-attacher",
        "org.opencontainers.image.description": "Kubernetes CSI external-attacher sidecar, compiled by Bun",
        "org.opencontainers.image.version": identity.version,
        "org.opencontainers.image.revision": identity.commit,
        "org.opencontainers.image.created": created,
        "org.opencontainers.image.licenses": packageJson.license,
      },
    }));
    const layout = join(work, "layout");
    writeOciLayout({ layout, images, created, author: "bun-csi-attacher", entrypoint: ["/csi-attacher"], user: `${nonrootId}:${nonrootId}`, env: imageEnvironment });
    const index = writePlatformIndex(layout, images.map((image) => image.tag), imageName.tag);
    const out = resolve(options.out);
    mkdirSync(dirname(out), { recursive: true });
    // Written beside and renamed, so a failed build never leaves half an archive under the real name.
    const partial = `${out}.partial`;
    writeImageArchive({ layout, tag: imageName.tag, shortName: `${imageName.repository}:${imageName.tag}`, qualifiedName: qualifiedImageName, file: partial, mtime: epoch });
    renameSync(partial, out);

    // Read the archive back as a consumer would: skopeo lists the index's platforms.
    const raw = JSON.parse(runTool(["skopeo", "inspect", "--raw", `oci-archive:${out}`])) as { manifests?: { platform?: { os: string; architecture: string } }[] };
    const listed = (raw.manifests ?? []).map((manifest) => `${manifest.platform?.os}/${manifest.platform?.architecture}`);
    const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
    const sizes = platforms.map((platform) => `${platform.target.platform} layers ${mib(statSync(platform.baseTar).size + statSync(platform.appTar).size)} uncompressed`);
    const identity = platforms[0]?.identity;
    console.log(
      `wrote ${options.out} (${mib(statSync(out).size)}; ${sizes.join(", ")}), ${identity?.version} commit ${identity?.commit}, ` +
        `index ${index.digest} of ${listed.join(", ")}, in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

try {
  build();
} catch (e: unknown) {
  if (!(e instanceof ImageBuildError)) throw e;
  console.error(`bun run image: ${e.message}`);
  process.exit(1);
}
