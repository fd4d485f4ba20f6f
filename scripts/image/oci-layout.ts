/**
 * The OCI image layout of the image, written by umoci (Debian's package of
 * the openSUSE tool): it computes the layers' digests and diff IDs, writes
 * the config, manifest and index, and removes blobs nothing refers to. Our
 * code only says what goes in.
 */
import { runTool } from "./run-tool";

/** One layer: an uncompressed tar archive and what its history entry says made it. */
export interface LayerInput {
  readonly tar: string;
  readonly createdBy: string;
}

/** One platform's image in the layout. */
export interface PlatformImage {
  /** The tag inside the layout (index.json's ref.name), until the platform index replaces it. */
  readonly tag: string;
  /** Bottom first. */
  readonly layers: readonly LayerInput[];
  /** OCI's name of the CPU: amd64, arm64. */
  readonly architecture: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** Options of {@link writeOciLayout}. */
export interface OciLayoutOptions {
  /** The layout directory to create; it must not exist. */
  readonly layout: string;
  /** One image per platform, all in the one layout (their blobs side by side). */
  readonly images: readonly PlatformImage[];
  /** The images' creation time (RFC 3339), also every history entry's: SOURCE_DATE_EPOCH, never now. */
  readonly created: string;
  readonly author: string;
  readonly entrypoint: readonly string[];
  /** `uid:gid`. */
  readonly user: string;
  /** The config's environment; a container's own env overrides each. */
  readonly env: Readonly<Record<string, string>>;
}

/** writeImage adds one platform's image, tagged, to an initialised layout. */
function writeImage(options: OciLayoutOptions, platformImage: PlatformImage): void {
  const image = `${options.layout}:${platformImage.tag}`;
  runTool(["umoci", "new", "--image", image]);
  for (const layer of platformImage.layers) {
    // umoci gzips the layer and records its diff ID; the history entry
    // carries the fixed time, not the clock's.
    runTool([
      "umoci",
      "raw",
      "add-layer",
      "--image",
      image,
      `--history.created=${options.created}`,
      `--history.created_by=${layer.createdBy}`,
      `--history.author=${options.author}`,
      layer.tar,
    ]);
  }
  runTool([
    "umoci",
    "config",
    "--image",
    image,
    // A configuration change adds no layer; its history entry would only repeat the command.
    "--no-history",
    `--created=${options.created}`,
    `--author=${options.author}`,
    `--architecture=${platformImage.architecture}`,
    "--os=linux",
    `--config.user=${options.user}`,
    ...Object.entries(options.env)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, value]) => `--config.env=${name}=${value}`),
    ...options.entrypoint.map((arg) => `--config.entrypoint=${arg}`),
    ...Object.entries(platformImage.labels)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, value]) => `--config.label=${key}=${value}`),
  ]);
}

/** writeOciLayout builds each platform's image in a fresh OCI layout directory. */
export function writeOciLayout(options: OciLayoutOptions): void {
  runTool(["umoci", "init", "--layout", options.layout]);
  for (const platformImage of options.images) writeImage(options, platformImage);
  // Each step above wrote a new config and manifest; only the last of each image are referenced.
  runTool(["umoci", "gc", "--layout", options.layout]);
}
