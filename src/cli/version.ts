import packageJson from "../../package.json" with { type: "json" };

// Replaced by scripts/build.ts through `bun build --define`; absent (and so
// `typeof` "undefined") when the attacher runs from source.
declare const CSI_ATTACHER_GIT_COMMIT: string | undefined;

/** version is this build's version, taken from package.json when the binary is built. */
export const version: string = packageJson.version;

/**
 * gitCommit is the commit the binary was built from, embedded at build time:
 * a short hash with "-dirty" when the tree had uncommitted changes,
 * "outside-git" for a build from a tree that is no git checkout, and
 * "unbuilt" when running from source.
 */
export const gitCommit: string = typeof CSI_ATTACHER_GIT_COMMIT === "string" ? CSI_ATTACHER_GIT_COMMIT : "unbuilt";

/**
 * platformOf names an OS and Node-style CPU as Go and OCI images do
 * (`linux/amd64`, `linux/arm64`): the words an operator matches against a
 * node's `kubernetes.io/arch` label and an image's platform.
 */
export function platformOf(os: string, arch: string): string {
  return `${os}/${arch === "x64" ? "amd64" : arch}`;
}

/**
 * platform is what this binary runs as. `bun build --compile --target`
 * fixes process.platform and process.arch to the target's, so a
 * cross-compiled binary names its own architecture, not the builder's.
 */
export const platform: string = platformOf(process.platform, process.arch);

/** versionLine is what `--version` prints: name, version, commit and platform. */
export function versionLine(): string {
  return `csi-attacher ${version} (commit ${gitCommit}, ${platform})`;
}
