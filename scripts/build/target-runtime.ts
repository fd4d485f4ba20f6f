/**
 * The Bun runtime a cross-compiled binary is made from. `bun build
 * --compile --target=bun-linux-arm64` would download it by itself, from
 * registry.npmjs.org (nothing else), into ~/.bun/install/cache, without
 * checking it against anything (Bun 1.4.5's src/compile_target.zig). We
 * fetch the same npm tarball instead and check it against the sha512 that
 * package-lock.json already pins for it (the `bun` package lists every
 * platform's runtime as an optional dependency, so the lock holds them all),
 * then hand it to `--compile-executable-path`. The build so needs only the
 * npm registry, honours npm_config_registry, and takes a runtime only if it
 * is the one the lock file names.
 */
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BuildTarget } from "./build-targets";
import { cacheRoot } from "./cache-root";
import { BuildError } from "./errors";

/** Unpacked runtimes, kept across builds, one directory per package and version. */
export const runtimeCache = join(cacheRoot(), "bun-runtimes");

/** LockedPackage is what package-lock.json pins of one package. */
export interface LockedPackage {
  readonly name: string;
  readonly version: string;
  /** Subresource-integrity string: `sha512-<base64>`. */
  readonly integrity: string;
}

/** lockedPackage reads the pin of `name` from package-lock.json's text. */
export function lockedPackage(lockText: string, name: string): LockedPackage {
  const lock = JSON.parse(lockText) as { packages?: Record<string, { version?: unknown; integrity?: unknown }> };
  const entry = lock.packages?.[`node_modules/${name}`];
  if (typeof entry?.version !== "string" || typeof entry.integrity !== "string" || !entry.integrity.startsWith("sha512-")) {
    throw new BuildError(`package-lock.json pins no version and sha512 integrity of ${name}: it comes with the \`bun\` dev dependency; run \`npm install\` and commit the lock file`);
  }
  return { name, version: entry.version, integrity: entry.integrity };
}

/** tarballUrl is where the npm registry serves a scoped package's tarball. */
export function tarballUrl(registry: string, pin: LockedPackage): string {
  const base = registry.endsWith("/") ? registry : `${registry}/`;
  const bare = pin.name.slice(pin.name.indexOf("/") + 1);
  return `${base}${pin.name}/-/${bare}-${pin.version}.tgz`;
}

/** verifyIntegrity throws unless `bytes` have the sha512 of `pin.integrity`. */
export function verifyIntegrity(pin: LockedPackage, bytes: Uint8Array, source: string): void {
  const actual = `sha512-${createHash("sha512").update(bytes).digest("base64")}`;
  if (actual !== pin.integrity) throw new BuildError(`${source} (${pin.name}@${pin.version}) has integrity ${actual}, but package-lock.json pins ${pin.integrity}: refusing to build with it`);
}

/**
 * targetRuntime returns the path of the Bun executable for `target`,
 * fetching and checking it when the cache lacks it. The runtime's version
 * must be the running Bun's: bytecode is only valid for the engine that
 * wrote it.
 */
export async function targetRuntime(target: BuildTarget, lockText: string, cacheDir: string = runtimeCache): Promise<string> {
  const pin = lockedPackage(lockText, target.runtimePackage);
  if (pin.version !== Bun.version) throw new BuildError(`package-lock.json pins ${pin.name}@${pin.version} but this is Bun ${Bun.version}: run \`npm ci\` so both are the same version`);
  const dir = join(cacheDir, `${target.bunTarget}-${pin.version}`);
  const executable = join(dir, "bun");
  if (existsSync(executable)) return executable;

  const registry = process.env["npm_config_registry"] ?? process.env["NPM_CONFIG_REGISTRY"] ?? "https://registry.npmjs.org/";
  const url = tarballUrl(registry, pin);
  let response: Response;
  try {
    response = await fetch(url);
  } catch (e: unknown) {
    throw new BuildError(`cannot fetch the ${target.platform} Bun runtime from ${url}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  if (!response.ok) throw new BuildError(`fetching the ${target.platform} Bun runtime from ${url} answered HTTP ${response.status}`);
  const tarball = new Uint8Array(await response.arrayBuffer());
  verifyIntegrity(pin, tarball, url);

  // Unpacked beside the cache entry and renamed into place, so a build that
  // dies half way never leaves a truncated runtime under the real name.
  mkdirSync(cacheDir, { recursive: true });
  const scratch = mkdtempSync(join(cacheDir, "unpack-"));
  try {
    writeFileSync(join(scratch, "package.tgz"), tarball);
    const untar = Bun.spawnSync(["tar", "-xzf", "package.tgz", "package/bin/bun"], { cwd: scratch, stdout: "pipe", stderr: "pipe" });
    if (untar.exitCode !== 0) throw new BuildError(`cannot unpack package/bin/bun from ${url}: ${untar.stderr.toString().trim()}`);
    chmodSync(join(scratch, "package/bin/bun"), 0o755);
    mkdirSync(dir, { recursive: true });
    renameSync(join(scratch, "package/bin/bun"), executable);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return executable;
}
