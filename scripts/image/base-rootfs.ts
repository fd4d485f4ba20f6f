/**
 * The image's base layer: what distroless `base-debian12` holds that a
 * Bun-compiled binary uses, assembled from pinned Debian packages instead
 * of pulled from gcr.io.
 *
 * - glibc from `libc6`: its whole lib/ and lib64/ (the loader and every
 *   shared library, 4.7 MB), so NSS lookups and any library Bun dlopens are
 *   there, not only the four the binary links (libc, libm, libpthread,
 *   libdl). Left out: the gconv charset modules (iconv only; Bun carries ICU),
 *   ld.so.conf.d (no ldconfig runs; the loader's built-in paths find
 *   /lib/<triplet>), and the docs but the copyright.
 * - CA certificates from `ca-certificates`: the bundle its postinst would
 *   have written, and nothing else of it (its update script needs a shell).
 * - /etc/passwd and /etc/group with root, nobody and nonroot (65532), as
 *   distroless has them; /etc/nsswitch.conf naming only the sources glibc
 *   2.36 has built in (files, dns), since the `compat` that distroless names
 *   needs libnss_compat for nothing we look up.
 * - /tmp (1777), /root (0700) and nonroot's home (0700, owned by 65532).
 * - From `base-files`: /etc/os-release and /etc/debian_version, and for each
 *   package a record in /var/lib/dpkg/status.d/ (its control fields), as
 *   distroless writes them: image scanners read both to find the Debian
 *   release and the glibc version to match against advisories. These are
 *   data; there is no dpkg to read them.
 *
 * There is no shell, no coreutils and no package manager: nothing here can
 * run but the loader.
 */
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { caBundle } from "./ca-bundle";
import { runTool } from "./run-tool";

/** The Debian packages the base is made of; deploy/image/base-packages.lock.json pins each. */
export const basePackages: readonly string[] = ["base-files", "ca-certificates", "libc6"];

/** The uid and gid of distroless's `nonroot`, which the image runs as. */
export const nonrootId = 65532;

/** Paths in the base owned by nonroot instead of root (the layer archive says so). */
export const nonrootOwnedPaths: readonly string[] = ["home/nonroot"];

const passwd = ["root:x:0:0:root:/root:/sbin/nologin", "nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin", `nonroot:x:${nonrootId}:${nonrootId}:nonroot:/home/nonroot:/sbin/nologin`];
const group = ["root:x:0:", "nobody:x:65534:", `nonroot:x:${nonrootId}:`];
const nsswitch = ["passwd: files", "group: files", "shadow: files", "hosts: files dns", "networks: files", "protocols: files", "services: files"];

/** The .deb files the base is made of, already verified against their pins. */
export interface BaseDebs {
  readonly baseFiles: string;
  readonly libc6: string;
  readonly caCertificates: string;
}

/** extractDeb unpacks a .deb's files (not its scripts) into a new directory under `scratch` and returns it. */
export function extractDeb(deb: string, scratch: string): string {
  const dir = mkdtempSync(join(scratch, "deb-"));
  runTool(["dpkg-deb", "--extract", deb, dir]);
  return dir;
}

/** writeFileWithMode writes a file and sets its mode whatever the umask. */
function writeFileWithMode(path: string, text: string, mode: number): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
  writeFileSync(path, text);
  chmodSync(path, mode);
}

/** makeDir creates a directory and sets its mode whatever the umask. */
function makeDir(path: string, mode: number): void {
  mkdirSync(path, { recursive: true });
  chmodSync(path, mode);
}

/** stageBaseRootfs fills the empty directory `root` with the base's files. */
export function stageBaseRootfs(root: string, debs: BaseDebs, scratch: string): void {
  const libc = extractDeb(debs.libc6, scratch);
  const ca = extractDeb(debs.caCertificates, scratch);
  const base = extractDeb(debs.baseFiles, scratch);
  try {
    chmodSync(root, 0o755);
    for (const dir of ["lib", "lib64"]) {
      // lib64 holds the x86-64 loader's symlink; arm64's loader sits in lib.
      if (existsSync(join(libc, dir))) cpSync(join(libc, dir), join(root, dir), { recursive: true, verbatimSymlinks: true });
    }
    makeDir(join(root, "usr/share/doc/libc6"), 0o755);
    cpSync(join(libc, "usr/share/doc/libc6/copyright"), join(root, "usr/share/doc/libc6/copyright"));
    makeDir(join(root, "usr/share/doc/ca-certificates"), 0o755);
    cpSync(join(ca, "usr/share/doc/ca-certificates/copyright"), join(root, "usr/share/doc/ca-certificates/copyright"));
    makeDir(join(root, "etc/ssl/certs"), 0o755);
    writeFileWithMode(join(root, "etc/ssl/certs/ca-certificates.crt"), caBundle(join(ca, "usr/share/ca-certificates")), 0o644);
    writeFileWithMode(join(root, "etc/passwd"), `${passwd.join("\n")}\n`, 0o644);
    writeFileWithMode(join(root, "etc/group"), `${group.join("\n")}\n`, 0o644);
    writeFileWithMode(join(root, "etc/nsswitch.conf"), `${nsswitch.join("\n")}\n`, 0o644);
    makeDir(join(root, "tmp"), 0o1777);
    makeDir(join(root, "root"), 0o700);
    makeDir(join(root, "home"), 0o755);
    makeDir(join(root, "home/nonroot"), 0o700);
    makeDir(join(root, "usr/lib"), 0o755);
    cpSync(join(base, "usr/lib/os-release"), join(root, "usr/lib/os-release"));
    cpSync(join(base, "etc/os-release"), join(root, "etc/os-release"), { verbatimSymlinks: true });
    cpSync(join(base, "etc/debian_version"), join(root, "etc/debian_version"));
    makeDir(join(root, "usr/share/doc/base-files"), 0o755);
    cpSync(join(base, "usr/share/doc/base-files/copyright"), join(root, "usr/share/doc/base-files/copyright"));
    makeDir(join(root, "var/lib/dpkg/status.d"), 0o755);
    for (const [name, deb] of [["base-files", debs.baseFiles], ["ca-certificates", debs.caCertificates], ["libc6", debs.libc6]] as const) {
      writeFileWithMode(join(root, "var/lib/dpkg/status.d", name), runTool(["dpkg-deb", "--field", deb]), 0o644);
    }
    for (const dir of ["usr", "usr/share", "usr/share/doc", "etc", "etc/ssl", "var", "var/lib", "var/lib/dpkg"]) chmodSync(join(root, dir), 0o755);
  } finally {
    for (const dir of [libc, ca, base]) rmSync(dir, { recursive: true, force: true });
  }
}
