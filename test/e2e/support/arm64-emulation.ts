/**
 * Running the arm64 binary on this machine: natively on an arm64 host, and
 * elsewhere under QEMU's user-mode emulator (`qemu-aarch64-static`, Debian's
 * qemu-user-static) with arm64 glibc from the pinned `libc6:arm64` of the
 * image's lock file as its root for the loader and libraries (`-L`).
 */
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultOutfile, hostTarget, targetFor } from "../../../scripts/build/build-targets";
import { extractDeb } from "../../../scripts/image/base-rootfs";
import type { CommandWrapper } from "../../ground/managed-process";
import { debCache, ensureDpkgArchitecture, fetchPinnedPackage, packageLockPath, parsePackageLock, pinFor } from "../../../scripts/image/pinned-packages";

const repositoryRoot = join(import.meta.dir, "../../..");
export const arm64 = targetFor("linux/arm64");

/** The arm64 binary `bun run build -- --target=linux/arm64` writes. */
export const arm64Binary = join(repositoryRoot, defaultOutfile(arm64));

/** Whether this machine runs arm64 code natively. */
export const nativeArm64 = hostTarget() === arm64;

/**
 * arm64EmulationProblem says why this machine cannot run the arm64 binary,
 * or undefined if it can. The test fails with this sentence, never skips.
 */
export function arm64EmulationProblem(): string | undefined {
  if (nativeArm64) return undefined;
  if (Bun.which(arm64.qemuUserStatic) === null) {
    return `the arm64 end-to-end test runs the arm64 binary under ${arm64.qemuUserStatic}, which is missing: apt-get install -y --no-install-recommends qemu-user-static (as root; .ci/run does)`;
  }
  return undefined;
}

/**
 * arm64Sysroot unpacks the pinned libc6:arm64 (downloaded by apt into the
 * image build's .deb cache, and checked against its sha256) into a new
 * directory: the loader and glibc QEMU gives the binary.
 */
export function arm64Sysroot(): string {
  const lock = parsePackageLock(readFileSync(join(repositoryRoot, packageLockPath), "utf8"));
  ensureDpkgArchitecture("arm64");
  return extractDeb(fetchPinnedPackage(pinFor(lock, "libc6", "arm64"), debCache), tmpdir());
}

/** arm64Wrapper is what the arm64 binary runs under: nothing natively, QEMU elsewhere. */
export function arm64Wrapper(sysroot: string): CommandWrapper {
  return nativeArm64 ? [] : [arm64.qemuUserStatic, "-L", sysroot];
}
