import { ImageBuildError, ToolError } from "./errors";
import { runTool } from "./run-tool";

/**
 * The programs `bun run image` calls, each with the Debian package that
 * ships it. umoci writes the OCI layout (layers, config, manifest, index),
 * skopeo reads the finished archive back; GNU tar makes the reproducible
 * layer archives; dpkg-deb unpacks the pinned packages that apt-get
 * downloads. The image of another CPU adds that CPU's QEMU user-mode
 * emulator ({@link emulatorTools}).
 */
export const requiredTools: Readonly<Record<string, string>> = {
  umoci: "umoci",
  skopeo: "skopeo",
  tar: "tar",
  "dpkg-deb": "dpkg",
  "apt-get": "apt",
  "apt-cache": "apt",
};

/**
 * emulatorTools are the QEMU emulators (Debian's qemu-user-static) that run
 * `--version` of each binary built for another CPU, so its image's labels
 * come from the binary itself and its loader and libc are checked to be in
 * that image's base.
 */
export function emulatorTools(emulators: readonly string[]): Record<string, string> {
  return Object.fromEntries(emulators.map((emulator) => [emulator, "qemu-user-static"]));
}

/** missingPackages lists, sorted and once each, the packages of the tools not on PATH. */
export function missingPackages(tools: Readonly<Record<string, string>>, onPath: (tool: string) => boolean): string[] {
  const missing = Object.entries(tools)
    .filter(([tool]) => !onPath(tool))
    .map(([, pkg]) => pkg);
  return [...new Set(missing)].sort();
}

/**
 * ensureTools installs the packages of missing tools with apt when this
 * process is root (as CI and a fresh builder VM are), and otherwise fails
 * naming them: an image build must not half-run and leave a partial
 * archive behind.
 */
export function ensureTools(tools: Readonly<Record<string, string>> = requiredTools): void {
  const missing = missingPackages(tools, (tool) => Bun.which(tool) !== null);
  if (missing.length === 0) return;
  const install = ["apt-get", "install", "-y", "--no-install-recommends", ...missing];
  if (process.getuid?.() !== 0 || Bun.which("apt-get") === null) {
    throw new ImageBuildError(`bun run image needs the Debian packages ${missing.join(", ")}: run \`${install.join(" ")}\` as root`);
  }
  console.log(`installing ${missing.join(", ")} with apt`);
  const env = { DEBIAN_FRONTEND: "noninteractive" };
  try {
    runTool(install, { env });
  } catch (e: unknown) {
    if (!(e instanceof ToolError)) throw e;
    // A clean machine may have no package lists yet: fetch them once and retry.
    runTool(["apt-get", "update", "-q"], { env });
    runTool(install, { env });
  }
}
