import { ImageBuildError, ToolError } from "./errors";
import { runTool } from "./run-tool";

/**
 * The name the archive gives the image. deploy/kubernetes/deployment.yaml
 * runs `bun-csi-attacher:latest`, so a `docker load`, `podman load` or
 * `k3s ctr images import` of the archive makes exactly that image present.
 */
export const imageName = { repository: "bun-csi-attacher", tag: "latest" } as const;

/** The fully qualified reference containerd (and so k3s) stores a short name under. */
export const qualifiedImageName = `docker.io/library/${imageName.repository}:${imageName.tag}`;

/** BinaryIdentity is what the binary says it is. */
export interface BinaryIdentity {
  readonly version: string;
  readonly commit: string;
  /** `linux/amd64` or `linux/arm64`: what the binary was compiled for. */
  readonly platform: string;
}

/** parseVersionLine reads `csi-attacher <version> (commit <commit>, <os>/<arch>)`, what `--version` prints. */
export function parseVersionLine(line: string): BinaryIdentity {
  const match = /^csi-attacher (\S+) \(commit ([^\s,]+), ([a-z0-9]+\/[a-z0-9]+)\)\s*$/.exec(line);
  if (match?.[1] === undefined || match[2] === undefined || match[3] === undefined) {
    throw new ImageBuildError(`unexpected --version output ${JSON.stringify(line)}: expected "csi-attacher <version> (commit <commit>, <os>/<arch>)"`);
  }
  return { version: match[1], commit: match[2], platform: match[3] };
}

/**
 * binaryIdentity asks the binary itself for its version, commit and
 * platform, so the image's labels describe the file inside it, whatever
 * tree the image is built from. `runner` runs a binary of another CPU (an
 * emulator and its flags).
 */
export function binaryIdentity(binary: string, runner: readonly string[] = []): BinaryIdentity {
  return parseVersionLine(runTool([...runner, binary, "--version"]));
}

/**
 * sourceDateEpoch is the one timestamp the image carries (file mtimes, the
 * config's `created`, history): SOURCE_DATE_EPOCH if set, else the HEAD
 * commit's time, else 0 outside git. A time of the build itself would make
 * every build a different image.
 */
export function sourceDateEpoch(env: Readonly<Record<string, string | undefined>> = process.env): number {
  const given = env["SOURCE_DATE_EPOCH"];
  if (given !== undefined && given !== "") {
    if (!/^\d+$/.test(given)) throw new ImageBuildError(`SOURCE_DATE_EPOCH=${JSON.stringify(given)} is not a number of seconds since 1970`);
    return Number(given);
  }
  try {
    return Number(runTool(["git", "log", "-1", "--format=%ct"]).trim());
  } catch (e: unknown) {
    if (e instanceof ToolError) return 0;
    throw e;
  }
}

/** ociArchitecture is the OCI/Debian name of the CPU this process runs on, which the binary was built for. */
export function ociArchitecture(arch: string = process.arch): string {
  switch (arch) {
    case "x64":
      return "amd64";
    case "arm64":
      return "arm64";
    default:
      throw new ImageBuildError(`no image architecture for ${arch}: bun build --compile targets x64 and arm64 Linux`);
  }
}
