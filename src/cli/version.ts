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

/** versionLine is what `--version` prints: name, version and commit. */
export function versionLine(): string {
  return `csi-attacher ${version} (commit ${gitCommit})`;
}
