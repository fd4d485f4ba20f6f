/**
 * A stand-in for the sidecar image where no container engine runs: an empty
 * root directory holding the compiled binary and only the files the
 * distroless glibc base (`gcr.io/distroless/base-debian12`) ships that a
 * dynamically linked program can touch — the glibc loader and libc, libm,
 * libpthread and libdl, `/etc/passwd` and `/etc/group` with `nonroot`
 * (65532), and a world-writable `/tmp`. The libraries are the host's copies:
 * the host is Debian 12 (bookworm), as that base is.
 *
 * The binary runs there through `unshare --mount` + `chroot` as uid 65532
 * with an empty environment, the root mounted read-only (as the example
 * Deployment's readOnlyRootFilesystem has it); like a container runtime, it
 * gets `/proc` and a `/dev` with only null, zero, full, random and urandom. The network is not
 * unshared, so kube-apiserver on 127.0.0.1 stays reachable.
 */
import { chmodSync, copyFileSync, mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The uid and gid of distroless's `nonroot` user. */
export const nonrootId = 65532;

/** Where, inside the root, the driver's socket directory is bind-mounted. */
export const socketMountPoint = "/csi";

/** Where, inside the root, the kubeconfig is copied to. */
export const kubeconfigInRoot = "/etc/kubeconfig";

/** Where, inside the root, the binary is. */
export const binaryInRoot = "/csi-attacher";

/**
 * The glibc files of distroless base-debian12 (package libc6) that a
 * program linked against libc, libm, libpthread and libdl can load, by the
 * path the loader looks them up at.
 */
function glibcFiles(): readonly string[] {
  switch (process.arch) {
    case "x64":
      return ["/lib64/ld-linux-x86-64.so.2", ...["libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2"].map((lib) => `/lib/x86_64-linux-gnu/${lib}`)];
    case "arm64":
      return ["/lib/ld-linux-aarch64.so.1", ...["libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2"].map((lib) => `/lib/aarch64-linux-gnu/${lib}`)];
    default:
      throw new Error(`no distroless glibc layout known for architecture ${process.arch}`);
  }
}

/**
 * buildDistrolessRoot fills the empty directory `root` with `binary` and the
 * distroless base files, and copies `kubeconfig` in, readable by nonroot.
 */
export function buildDistrolessRoot(root: string, binary: string, kubeconfig: string): void {
  // Path lookup inside the chroot needs search permission on "/" for nonroot.
  chmodSync(root, 0o755);
  for (const file of glibcFiles()) {
    mkdirSync(join(root, file, ".."), { recursive: true });
    copyFileSync(realpathSync(file), join(root, file));
  }
  mkdirSync(join(root, "etc"));
  writeFileSync(join(root, "etc/passwd"), "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n");
  writeFileSync(join(root, "etc/group"), "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n");
  copyFileSync(kubeconfig, join(root, kubeconfigInRoot));
  chmodSync(join(root, kubeconfigInRoot), 0o444);
  mkdirSync(join(root, "tmp"));
  chmodSync(join(root, "tmp"), 0o1777);
  for (const dir of ["proc", "dev", socketMountPoint.slice(1)]) mkdirSync(join(root, dir));
  copyFileSync(binary, join(root, binaryInRoot));
  chmodSync(join(root, binaryInRoot), 0o755);
}

// $1 root, $2 socket directory; the rest are the binary's arguments. Mounts
// live in the new mount namespace only and vanish with the process. Each
// step execs the next, so the pid the test spawned is the attacher's.
const enterRoot = `
set -eu
root=$1; sockets=$2; shift 2
# Read-only, as deploy/kubernetes/deployment.yaml runs it (readOnlyRootFilesystem).
mount --bind "$root" "$root"
mount -o remount,bind,ro "$root"
mount -t proc proc "$root/proc"
mount -t tmpfs -o mode=0755,size=64k tmpfs "$root/dev"
for node in null zero full random urandom; do
  touch "$root/dev/$node"
  mount --bind "/dev/$node" "$root/dev/$node"
done
mount --bind "$sockets" "$root${socketMountPoint}"
chroot=$(command -v chroot)
exec env -i "$chroot" --userspec=${nonrootId}:${nonrootId} "$root" ${binaryInRoot} "$@"
`;

/**
 * commandInRoot is the command line that runs the binary inside `root` as
 * nonroot with an empty environment, `socketDir` mounted at /csi.
 */
export function commandInRoot(root: string, socketDir: string, args: readonly string[]): string[] {
  return ["unshare", "--mount", "--propagation", "private", "sh", "-c", enterRoot, "enter-root", root, socketDir, ...args];
}
