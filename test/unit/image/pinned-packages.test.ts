import { describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { basePackages } from "../../../scripts/image/base-rootfs";
import { PinError } from "../../../scripts/image/errors";
import { packageLockPath, parseAptCacheShow, parsePackageLock, pinFor, sha256Hex, updatePinsAdvice, verifyPinnedChecksum, type PinnedPackage } from "../../../scripts/image/pinned-packages";

const committed = parsePackageLock(readFileSync(join(import.meta.dir, "../../..", packageLockPath), "utf8"));
const libc6: PinnedPackage = { name: "libc6", version: "2.36-9+deb12u14", architecture: "amd64", sha256: "a".repeat(64) };

function pinError(run: () => unknown): PinError {
  try {
    run();
  } catch (e: unknown) {
    if (e instanceof PinError) return e;
    throw e;
  }
  throw new Error("no PinError");
}

describe("pinned base packages", () => {
  it("pins every package of the base for amd64 in the committed lock file", () => {
    expect(basePackages.map((name) => pinFor(committed, name, "amd64").name)).toEqual([...basePackages]);
  });

  it("pins every package of the base for arm64 too, each its arm64 build or an architecture-independent one", () => {
    expect(basePackages.map((name) => `${name} ${pinFor(committed, name, "arm64").architecture}`)).toEqual(["base-files arm64", "ca-certificates all", "libc6 arm64"]);
    // The glibc of both platforms is one version: one source, two builds.
    expect(pinFor(committed, "libc6", "arm64").version).toBe(pinFor(committed, "libc6", "amd64").version);
  });

  it("picks an architecture's own pin, or an architecture-independent one", () => {
    const lock = { about: "", packages: [libc6, { ...libc6, architecture: "arm64", sha256: "b".repeat(64) }, { name: "ca-certificates", version: "1", architecture: "all", sha256: "c".repeat(64) }] };
    expect([pinFor(lock, "libc6", "arm64").sha256, pinFor(lock, "ca-certificates", "arm64").architecture]).toEqual(["b".repeat(64), "all"]);
  });

  it("fails a missing pin with how to update the pins", () => {
    const error = pinError(() => pinFor({ about: "", packages: [libc6] }, "libc6", "arm64"));
    expect({ name: error.packageName, message: error.message }).toEqual({ name: "libc6", message: `${packageLockPath} pins no version of libc6 for arm64; ${updatePinsAdvice}` });
    expect(updatePinsAdvice).toContain("bun run image --update-pins");
  });

  it("fails a checksum mismatch naming both sums and how to update the pins", () => {
    const bytes = new TextEncoder().encode("not the pinned deb");
    const error = pinError(() => verifyPinnedChecksum(libc6, bytes));
    expect(error.message).toStartWith(`libc6 2.36-9+deb12u14 (amd64) has sha256 ${sha256Hex(bytes)} in the downloaded file, but ${packageLockPath} pins ${"a".repeat(64)}`);
    expect(error.message).toEndWith(updatePinsAdvice);
    expect(() => verifyPinnedChecksum({ ...libc6, sha256: sha256Hex(bytes) }, bytes)).not.toThrow();
  });

  it("refuses a lock file entry without an exact sha256", () => {
    expect(pinError(() => parsePackageLock(JSON.stringify({ about: "", packages: [{ ...libc6, sha256: "abc" }] }))).message).toBe(`${packageLockPath}: packages.0.sha256 must be 64 lower-case hex digits`);
    expect(pinError(() => parsePackageLock("{")).message).toStartWith(`${packageLockPath} is not JSON`);
  });

  it("reads a new pin from apt-cache show's stanza", () => {
    const stanza = "Package: libc6\nSource: glibc\nVersion: 2.36-9+deb12u15\nArchitecture: amd64\nSize: 2759320\nSHA256: " + "d".repeat(64) + "\nDescription: GNU C Library\n";
    expect(parseAptCacheShow(stanza)).toEqual({ name: "libc6", version: "2.36-9+deb12u15", architecture: "amd64", sha256: "d".repeat(64) });
  });
});
