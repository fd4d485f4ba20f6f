/**
 * The Debian packages the image's base is made of, pinned: name, exact
 * version, architecture and the sha256 of the .deb, in a committed lock
 * file. A build downloads exactly those versions with apt-get and refuses
 * any file whose checksum differs, so the base changes only through a
 * reviewed change of the lock file.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { cacheRoot } from "../build/cache-root";
import { PinError, ToolError } from "./errors";
import { runTool } from "./run-tool";

/** Downloaded .deb files, kept across builds and checked against their pins on every use. */
export const debCache = join(cacheRoot(), "debs");

/** Where the lock file lives, from the repository root. */
export const packageLockPath = "deploy/image/base-packages.lock.json";

/** What to do when a pin cannot be met; every PinError message ends with it. */
export const updatePinsAdvice = `to move to the versions apt offers now, run \`apt-get update && bun run image --update-pins\` (as root), then review and commit ${packageLockPath}`;

const pinnedPackageSchema = v.strictObject({
  name: v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9+.-]+$/, "must be a Debian package name")),
  version: v.pipe(v.string(), v.nonEmpty()),
  architecture: v.pipe(v.string(), v.regex(/^[a-z0-9-]+$/, "must be a Debian architecture such as amd64, arm64 or all")),
  sha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, "must be 64 lower-case hex digits")),
});

const packageLockSchema = v.strictObject({
  about: v.string(),
  packages: v.array(pinnedPackageSchema),
});

/** PinnedPackage is one .deb as the lock file pins it. */
export type PinnedPackage = v.InferOutput<typeof pinnedPackageSchema>;

/** PackageLock is the whole lock file. */
export type PackageLock = v.InferOutput<typeof packageLockSchema>;

/** parsePackageLock reads the lock file's text, or throws a PinError saying which entry is malformed. */
export function parsePackageLock(text: string): PackageLock {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e: unknown) {
    throw new PinError("*", `${packageLockPath} is not JSON: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  const result = v.safeParse(packageLockSchema, json);
  if (!result.success) {
    const issue = result.issues[0];
    throw new PinError("*", `${packageLockPath}: ${v.getDotPath(issue) ?? "(top level)"} ${issue.message}`);
  }
  return result.output;
}

/**
 * pinFor picks the pin of `name` for `architecture`: an entry of that
 * architecture, or one of architecture "all" (data-only packages such as
 * ca-certificates).
 */
export function pinFor(lock: PackageLock, name: string, architecture: string): PinnedPackage {
  const pin = lock.packages.find((entry) => entry.name === name && (entry.architecture === architecture || entry.architecture === "all"));
  if (pin === undefined) throw new PinError(name, `${packageLockPath} pins no version of ${name} for ${architecture}; ${updatePinsAdvice}`);
  return pin;
}

/** sha256Hex is the hex sha256 of `bytes`. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** verifyPinnedChecksum throws a PinError unless `bytes` (read from `source`) are the .deb `pin` names. */
export function verifyPinnedChecksum(pin: PinnedPackage, bytes: Uint8Array, source = "the downloaded file"): void {
  const actual = sha256Hex(bytes);
  if (actual !== pin.sha256) {
    throw new PinError(
      pin.name,
      `${pin.name} ${pin.version} (${pin.architecture}) has sha256 ${actual} in ${source}, but ${packageLockPath} pins ${pin.sha256}: ` +
        `either the lock entry was edited, the file is damaged (delete it to download it again), or the archive serves another file under the same version; ` +
        `do not build on it until you know which; ${updatePinsAdvice}`,
    );
  }
}

/** debFileName is the cache's name for a pinned .deb (an epoch's ":" spelled as apt spells it in file names). */
function debFileName(pin: PinnedPackage): string {
  return `${pin.name}_${pin.version.replace(":", "%3a")}_${pin.architecture}.deb`;
}

/**
 * ensureDpkgArchitecture makes apt fetch the package lists of
 * `architecture` (arm64 on an amd64 builder): dpkg must know it as a foreign
 * architecture. As root it adds it and fetches the lists; otherwise it
 * fails saying what to run.
 */
export function ensureDpkgArchitecture(architecture: string): void {
  if (architecture === "all") return;
  const known = [runTool(["dpkg", "--print-architecture"]).trim(), ...runTool(["dpkg", "--print-foreign-architectures"]).trim().split("\n")];
  if (known.includes(architecture)) return;
  if (process.getuid?.() !== 0) {
    throw new PinError("*", `apt has no ${architecture} packages here: run \`dpkg --add-architecture ${architecture} && apt-get update\` as root (.ci/run does)`);
  }
  runTool(["dpkg", "--add-architecture", architecture]);
  runTool(["apt-get", "update", "-q"]);
}

/**
 * downloadWithFreshLists runs `apt-get download`; when that fails and this
 * process is root, it fetches the package lists once (a fresh machine has
 * none, an old one stale ones) and tries again.
 */
function downloadWithFreshLists(spec: string, cwd: string): void {
  try {
    runTool(["apt-get", "download", "-q", spec], { cwd });
  } catch (e: unknown) {
    if (!(e instanceof ToolError) || process.getuid?.() !== 0) throw e;
    runTool(["apt-get", "update", "-q"]);
    runTool(["apt-get", "download", "-q", spec], { cwd });
  }
}

/**
 * fetchPinnedPackage returns the path of the pinned .deb in `cacheDir`,
 * downloading it with `apt-get download name:arch=version` when the cache
 * lacks it, and verifies its checksum either way.
 */
export function fetchPinnedPackage(pin: PinnedPackage, cacheDir: string): string {
  mkdirSync(cacheDir, { recursive: true });
  const cached = join(cacheDir, debFileName(pin));
  if (!existsSync(cached)) {
    // apt-get download writes into the working directory under a name of
    // its own choosing: give it an empty one and take the one file it wrote.
    const scratch = mkdtempSync(join(cacheDir, "download-"));
    try {
      const spec = `${pin.name}${pin.architecture === "all" ? "" : `:${pin.architecture}`}=${pin.version}`;
      try {
        downloadWithFreshLists(spec, scratch);
      } catch (e: unknown) {
        if (!(e instanceof ToolError)) throw e;
        throw new PinError(
          pin.name,
          `apt-get cannot download ${pin.name} ${pin.version} (${pin.architecture}): ${e.stderr.trim()}. ` +
            `If \`apt-get update\` does not help, the archive no longer serves this version (Debian replaces a version when it ships a security update); ${updatePinsAdvice}`,
          { cause: e },
        );
      }
      const [written] = readdirSync(scratch).filter((file) => file.endsWith(".deb"));
      if (written === undefined) throw new PinError(pin.name, `apt-get download ${spec} succeeded but wrote no .deb`);
      verifyPinnedChecksum(pin, readFileSync(join(scratch, written)), `apt-get's download ${written}`);
      renameSync(join(scratch, written), cached);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
  verifyPinnedChecksum(pin, readFileSync(cached), cached);
  return cached;
}

/** parseAptCacheShow reads Package, Version, Architecture and SHA256 from one `apt-cache show` stanza. */
export function parseAptCacheShow(stanza: string): PinnedPackage {
  const field = (name: string): string => {
    const value = new RegExp(`^${name}: (.+)$`, "m").exec(stanza)?.[1];
    if (value === undefined) throw new PinError("*", `apt-cache show printed no ${name} field`);
    return value.trim();
  };
  return v.parse(pinnedPackageSchema, { name: field("Package"), version: field("Version"), architecture: field("Architecture"), sha256: field("SHA256") });
}

/**
 * candidatePin is apt's candidate of `name` for `architecture`. apt-cache
 * answers `name:arm64` with nothing on an amd64 machine when the package is
 * architecture-independent (ca-certificates): then the package's own stanza
 * is the pin, if it is indeed "all".
 */
function candidatePin(name: string, architecture: string): PinnedPackage {
  const qualified = runTool(["apt-cache", "show", "--no-all-versions", `${name}:${architecture}`]);
  if (qualified.trim() !== "") return parseAptCacheShow(qualified);
  const pin = parseAptCacheShow(runTool(["apt-cache", "show", "--no-all-versions", name]));
  if (pin.architecture !== "all") throw new PinError(name, `apt offers no ${name} for ${architecture} (only ${pin.architecture}): has \`dpkg --add-architecture ${architecture} && apt-get update\` run?`);
  return pin;
}

/**
 * updatePins re-pins `names` for `architecture` to apt's candidate versions,
 * with the SHA256 the signed package index gives, keeps the pins of other
 * architectures, and writes the lock file. It then downloads each new pin
 * into `cacheDir`, so a checksum that differs from the index fails here.
 */
export function updatePins(lockPath: string, names: readonly string[], architecture: string, cacheDir: string): PackageLock {
  const old = existsSync(lockPath) ? parsePackageLock(readFileSync(lockPath, "utf8")) : undefined;
  const fresh = names.map((name) => candidatePin(name, architecture));
  const kept = (old?.packages ?? []).filter((pin) => !fresh.some((entry) => entry.name === pin.name && entry.architecture === pin.architecture));
  const packages = [...kept, ...fresh].sort((a, b) => a.name.localeCompare(b.name) || a.architecture.localeCompare(b.architecture));
  const lock: PackageLock = {
    about: old?.about ?? "Debian packages of the csi-attacher image's base. Written by `bun run image --update-pins`; review changes like code.",
    packages,
  };
  for (const pin of fresh) fetchPinnedPackage(pin, cacheDir);
  writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
  return lock;
}
