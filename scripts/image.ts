/**
 * image builds the csi-attacher sidecar image without a container engine:
 * dist/csi-attacher on a distroless-like base made of pinned Debian
 * packages, written as dist/csi-attacher-image.tar, an OCI archive that
 * docker, podman, skopeo and containerd (k3s) load.
 *
 *   bun run image                      # build the binary, then the image
 *   bun run image --binary=PATH        # use an already built binary
 *   bun run image --out=FILE           # write the archive elsewhere
 *   bun run image --update-pins        # re-pin the base to apt's current versions
 *
 * The same binary, lock file and SOURCE_DATE_EPOCH (default: the HEAD
 * commit's time) give the same image digest. deploy/Dockerfile builds the
 * same layout with Docker, on gcr.io's distroless base.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import packageJson from "../package.json" with { type: "json" };
import { basePackages, nonrootId, nonrootOwnedPaths, stageBaseRootfs } from "./image/base-rootfs";
import { ImageBuildError } from "./image/errors";
import { writeImageArchive } from "./image/image-archive";
import { binaryIdentity, imageName, ociArchitecture, qualifiedImageName, sourceDateEpoch } from "./image/image-identity";
import { writeOciLayout } from "./image/oci-layout";
import { fetchPinnedPackage, packageLockPath, parsePackageLock, pinFor, updatePins } from "./image/pinned-packages";
import { ensureTools } from "./image/required-tools";
import { writeReproducibleTar } from "./image/reproducible-tar";
import { runTool } from "./image/run-tool";

const { values: options } = parseArgs({
  options: {
    binary: { type: "string" },
    out: { type: "string", default: "dist/csi-attacher-image.tar" },
    "update-pins": { type: "boolean", default: false },
  },
  strict: true,
});

/** Downloaded .deb files, kept across builds and checked against their pins on every use. */
const debCache = join(process.env["XDG_CACHE_HOME"] ?? join(homedir(), ".cache"), "bun-csi-attacher", "debs");

/** rfc3339 spells seconds since the epoch as umoci's --created wants them. */
function rfc3339(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

function build(): void {
  const started = performance.now();
  ensureTools();
  const architecture = ociArchitecture();
  if (options["update-pins"]) {
    const lock = updatePins(packageLockPath, basePackages, architecture, debCache);
    for (const pin of lock.packages) console.log(`pinned ${pin.name} ${pin.version} (${pin.architecture}) sha256 ${pin.sha256}`);
    console.log(`wrote ${packageLockPath}: review and commit it`);
    return;
  }
  const lock = parsePackageLock(readFileSync(packageLockPath, "utf8"));
  const debOf = (name: string) => fetchPinnedPackage(pinFor(lock, name, architecture), debCache);
  const debs = { baseFiles: debOf("base-files"), libc6: debOf("libc6"), caCertificates: debOf("ca-certificates") };

  let binary = options.binary;
  if (binary === undefined) {
    console.log(runTool([process.execPath, "run", "scripts/build.ts"], { env: { ATTACHER_OUTFILE: "dist/csi-attacher" } }).trim());
    binary = "dist/csi-attacher";
  }
  if (!existsSync(binary)) throw new ImageBuildError(`${binary} does not exist: run \`bun run build\`, or leave out --binary`);
  const identity = binaryIdentity(binary);
  const epoch = sourceDateEpoch();
  const created = rfc3339(epoch);

  const work = mkdtempSync(join(tmpdir(), "csi-attacher-image-"));
  try {
    const base = join(work, "base");
    mkdirSync(base);
    stageBaseRootfs(base, debs, work);
    writeReproducibleTar({ root: base, file: join(work, "base.tar"), mtime: epoch, otherOwned: nonrootOwnedPaths, otherOwner: nonrootId });
    const app = join(work, "app");
    mkdirSync(app);
    chmodSync(app, 0o755);
    copyFileSync(binary, join(app, "csi-attacher"));
    chmodSync(join(app, "csi-attacher"), 0o755);
    writeReproducibleTar({ root: app, file: join(work, "app.tar"), mtime: epoch });

    const pins = basePackages.map((name) => pinFor(lock, name, architecture)).map((pin) => `${pin.name} ${pin.version}`);
    const layout = join(work, "layout");
    writeOciLayout({
      layout,
      tag: imageName.tag,
      layers: [
        { tar: join(work, "base.tar"), createdBy: `bun run image: distroless-like base from Debian ${pins.join(", ")}` },
        { tar: join(work, "app.tar"), createdBy: `bun run image: /csi-attacher ${identity.version} (commit ${identity.commit})` },
      ],
      created,
      author: "bun-csi-attacher",
      architecture,
      entrypoint: ["/csi-attacher"],
      user: `${nonrootId}:${nonrootId}`,
      labels: {
        "org.opencontainers.image.title": "bun-csi-attacher",
        "org.opencontainers.image.description": "Kubernetes CSI external-attacher sidecar, compiled by Bun",
        "org.opencontainers.image.version": identity.version,
        "org.opencontainers.image.revision": identity.commit,
        "org.opencontainers.image.created": created,
        "org.opencontainers.image.licenses": packageJson.license,
      },
    });
    const out = resolve(options.out);
    mkdirSync(dirname(out), { recursive: true });
    // Written beside and renamed, so a failed build never leaves half an archive under the real name.
    const partial = `${out}.partial`;
    writeImageArchive({ layout, tag: imageName.tag, shortName: `${imageName.repository}:${imageName.tag}`, qualifiedName: qualifiedImageName, file: partial, mtime: epoch });
    renameSync(partial, out);

    // Read the archive back as a consumer would; skopeo prints the manifest digest.
    const inspected = JSON.parse(runTool(["skopeo", "inspect", `oci-archive:${out}`])) as { Digest?: string };
    const uncompressed = statSync(join(work, "base.tar")).size + statSync(join(work, "app.tar")).size;
    const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
    console.log(
      `wrote ${options.out} (${mib(statSync(out).size)}; layers ${mib(uncompressed)} uncompressed), ${identity.version} commit ${identity.commit}, ` +
        `digest ${inspected.Digest ?? "?"}, in ${((performance.now() - started) / 1000).toFixed(1)} s`,
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
