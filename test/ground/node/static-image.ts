/**
 * Packs one static binary into an image archive `ctr images import` takes,
 * with the project's image tooling (scripts/image: umoci writes the layout,
 * GNU tar the reproducible layer and archive): the node ground's pause
 * image, and Kubernetes' mock CSI driver as the Deployment's csi-driver
 * container. No base: a static Go binary needs no file beside it.
 */
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import { nameImage } from "../../../scripts/image/image-archive";
import { writeOciLayout } from "../../../scripts/image/oci-layout";
import { writeReproducibleTar } from "../../../scripts/image/reproducible-tar";

export interface StaticImageOptions {
  /** The static binary; it becomes `/<its name>`, the entrypoint. */
  readonly binary: string;
  /** The fully qualified name containerd stores it under, e.g. `localhost/node-ground/pause:1`. */
  readonly name: string;
  /** The image's user, `uid:gid`. */
  readonly user: string;
  /** The archive to write. */
  readonly file: string;
}

/** OCI's name of this machine's CPU. */
function ociArchitecture(): string {
  return process.arch === "x64" ? "amd64" : process.arch;
}

/** packStaticImage writes the archive and returns the path of the binary inside the image. */
export function packStaticImage(options: StaticImageOptions): string {
  const work = mkdtempSync(join(options.file, "..", ".static-image-"));
  try {
    const inside = `/${basename(options.binary)}`;
    const root = join(work, "root");
    mkdirSync(root);
    copyFileSync(options.binary, join(root, inside));
    chmodSync(join(root, inside), 0o755);
    const layer = join(work, "layer.tar");
    // The images are rebuilt at every start; a fixed time keeps their digests.
    writeReproducibleTar({ root, file: layer, mtime: 0 });
    const layout = join(work, "layout");
    const tag = "latest";
    writeOciLayout({
      layout,
      images: [{ tag, layers: [{ tar: layer, createdBy: `COPY ${basename(options.binary)} ${inside}` }], architecture: ociArchitecture(), labels: {} }],
      created: new Date(0).toISOString(),
      author: "bun-csi-attacher node ground",
      entrypoint: [inside],
      user: options.user,
      env: {},
    });
    nameImage(layout, tag, options.name, options.name);
    writeReproducibleTar({ root: layout, file: options.file, mtime: 0 });
    return inside;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
