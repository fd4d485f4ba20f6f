import { BuildError } from "./errors";

/** BuildTarget is one platform `bun run build --target=` compiles for. */
export interface BuildTarget {
  /** As Go, OCI images and `--version` name it: `linux/arm64`. */
  readonly platform: string;
  /** As OCI and Debian name the CPU: `arm64`. */
  readonly architecture: string;
  /** As Node and Bun name the CPU (`process.arch`): `arm64`. */
  readonly nodeArch: string;
  /** Bun's compile target (`Bun.build`'s `compile.target`, `bun build --compile --target=`). */
  readonly bunTarget: Bun.Build.CompileTarget;
  /** The npm package holding that Bun runtime; package-lock.json pins its version and integrity. */
  readonly runtimePackage: string;
  /** QEMU's user-mode emulator of that CPU (Debian's qemu-user-static), to run the binary on another. */
  readonly qemuUserStatic: string;
}

/** The platforms the image ships: Bun compiles for glibc Linux on x64 and arm64. */
export const buildTargets: readonly BuildTarget[] = [
  { platform: "linux/amd64", architecture: "amd64", nodeArch: "x64", bunTarget: "bun-linux-x64", runtimePackage: "@oven/bun-linux-x64", qemuUserStatic: "qemu-x86_64-static" },
  { platform: "linux/arm64", architecture: "arm64", nodeArch: "arm64", bunTarget: "bun-linux-arm64", runtimePackage: "@oven/bun-linux-aarch64", qemuUserStatic: "qemu-aarch64-static" },
];

/** targetFor reads `linux/arm64` (or Docker's TARGETARCH spelling `arm64`) into its target. */
export function targetFor(platformOrArch: string): BuildTarget {
  const target = buildTargets.find((entry) => entry.platform === platformOrArch || entry.architecture === platformOrArch);
  if (target === undefined) throw new BuildError(`no build target ${JSON.stringify(platformOrArch)}: choose one of ${buildTargets.map((entry) => entry.platform).join(", ")}`);
  return target;
}

/** hostTarget is the target of the CPU this process runs on, or undefined where Bun has none. */
export function hostTarget(nodeArch: string = process.arch): BuildTarget | undefined {
  return buildTargets.find((entry) => entry.nodeArch === nodeArch);
}

/**
 * crossTargets are the targets of the CPUs other than this one (`nodeArch`):
 * their binaries are cross-compiled here and run only under QEMU. Every
 * target, where Bun has none for this CPU.
 */
export function crossTargets(nodeArch: string = process.arch): BuildTarget[] {
  const host = hostTarget(nodeArch);
  return buildTargets.filter((target) => target !== host);
}

/**
 * defaultOutfile is where a build goes: dist/csi-attacher without a
 * `--target` (the host's binary, which the tests run), and
 * dist/csi-attacher-<arch> with one, so a cross build never replaces the
 * binary the tests are running.
 */
export function defaultOutfile(target: BuildTarget | undefined): string {
  return target === undefined ? "dist/csi-attacher" : `dist/csi-attacher-${target.architecture}`;
}
