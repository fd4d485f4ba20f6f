import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { X509Certificate, createHash } from "node:crypto";
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { gunzipSync } from "node:zlib";
import { hostTarget, targetFor } from "../../scripts/build/build-targets";
import { basePackages } from "../../scripts/image/base-rootfs";
import { imageName, ociArchitecture, parseVersionLine, qualifiedImageName } from "../../scripts/image/image-identity";
import { packageLockPath, parsePackageLock, pinFor } from "../../scripts/image/pinned-packages";
import { attacherBinary } from "../ground/attacher-process";
import { attacherContainer, readDeployment } from "../ground/deployment-manifest";
import { buildSidecarImage, crossBinaries, imageConfigOf, imageGroundProblem, run, skopeoInspect, unpackImage, type UnpackedImage } from "./support/sidecar-image";
import { runtimeReexecEnvironment } from "./support/runtime-reexec-environment";

/**
 * `bun run image` builds the sidecar image without a container engine: an
 * OCI archive, reproducible, that names itself as deployment.yaml runs it,
 * holding one image index of a linux/amd64 and a linux/arm64 image, each the
 * binary of that CPU on a distroless-like base of that CPU with nothing that
 * could run a command. test/e2e/runc-deployment.test.ts runs this machine's.
 */
let dir: string;
let first: string;
let second: string;
let unpacked: UnpackedImage;
/** The image of the other CPU (arm64 here), unpacked. */
let unpackedCross: UnpackedImage;
const crossArchitecture = hostTarget()?.architecture === "arm64" ? "amd64" : "arm64";

beforeAll(() => {
  const problem = imageGroundProblem();
  if (problem !== undefined) throw new Error(problem);
  dir = mkdtempSync(join(tmpdir(), "e2e-image-"));
  first = join(dir, "first.tar");
  second = join(dir, "second.tar");
  buildSidecarImage(first);
  buildSidecarImage(second);
  unpacked = unpackImage(first, join(dir, "unpacked"));
  unpackedCross = unpackImage(first, join(dir, "unpacked-cross"), crossArchitecture);
}, 300_000);

afterAll(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

/** walk lists every path under `root`, relative, with its lstat. */
function walk(root: string): { path: string; mode: number; uid: number; isFile: boolean; isDir: boolean }[] {
  return readdirSync(root, { recursive: true, withFileTypes: true }).map((entry) => {
    const full = join(entry.parentPath, entry.name);
    const stat = lstatSync(full);
    return { path: relative(root, full), mode: stat.mode & 0o7777, uid: stat.uid, isFile: stat.isFile(), isDir: stat.isDirectory() };
  });
}

/** The index the archive holds, as `skopeo inspect --raw` reads it, and its digest. */
function rawIndex(archive: string): { digest: string; index: { mediaType: string; manifests: { mediaType: string; digest: string; size: number; platform?: { architecture: string; os: string } }[] } } {
  const raw = run(["skopeo", "inspect", "--raw", `oci-archive:${archive}`]);
  return { digest: `sha256:${createHash("sha256").update(raw).digest("hex")}`, index: JSON.parse(raw) as ReturnType<typeof rawIndex>["index"] };
}

describe("bun run image", () => {
  it("gives the same index digest, and the same archive bytes, when built twice from the same binaries", () => {
    const digests = [skopeoInspect(first).Digest, skopeoInspect(second).Digest];
    expect(digests[0]).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect({ digest: digests[1], bytes: sha256(second) }).toEqual({ digest: digests[0], bytes: sha256(first) });
  });

  it("holds one OCI index of a linux/amd64 and a linux/arm64 image, each of its own CPU's binary", () => {
    const { digest, index } = rawIndex(first);
    expect(digest).toBe(skopeoInspect(first).Digest);
    expect(index.mediaType).toBe("application/vnd.oci.image.index.v1+json");
    expect(index.manifests.map((manifest) => ({ mediaType: manifest.mediaType, platform: manifest.platform }))).toEqual([
      { mediaType: "application/vnd.oci.image.manifest.v1+json", platform: { architecture: "amd64", os: "linux" } },
      { mediaType: "application/vnd.oci.image.manifest.v1+json", platform: { architecture: "arm64", os: "linux" } },
    ]);
    // Each platform's config says the same CPU as the index entry that points at it.
    for (const architecture of ["amd64", "arm64"]) {
      const config = JSON.parse(run(["skopeo", `--override-arch=${architecture}`, "inspect", "--raw", "--config", `oci-archive:${first}`])) as { architecture: string; os: string };
      expect({ architecture: config.architecture, os: config.os }).toEqual({ architecture, os: "linux" });
    }
    // The ELF machine of each image's /csi-attacher: x86-64 is 62, AArch64 183 (e_machine, little-endian, at byte 18).
    const machine = (path: string) => readFileSync(path).readUInt16LE(18);
    const elfMachine: Record<string, number> = { amd64: 62, arm64: 183 };
    expect({ host: machine(join(unpacked.rootfs, "csi-attacher")), cross: machine(join(unpackedCross.rootfs, "csi-attacher")) }).toEqual({
      host: elfMachine[hostTarget()?.architecture ?? ""] ?? -1,
      cross: elfMachine[crossArchitecture] ?? -1,
    });
  });

  it("runs /csi-attacher as 65532:65532 with the default PATH and the attacher's runtime options in its environment, and labels the version and commit the binary reports, on both platforms", () => {
    const binary = parseVersionLine(run([attacherBinary, "--version"]));
    for (const architecture of ["amd64", "arm64"]) {
      const config = imageConfigOf(first, architecture);
      expect({ architecture, entrypoint: config.Entrypoint, cmd: config.Cmd ?? null, user: config.User, env: config.Env?.toSorted(), version: config.Labels?.["org.opencontainers.image.version"], revision: config.Labels?.["org.opencontainers.image.revision"] }).toEqual({
        architecture,
        entrypoint: ["/csi-attacher"],
        cmd: null,
        user: "65532:65532",
        env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", ...runtimeReexecEnvironment()].sort(),
        version: binary.version,
        revision: binary.commit,
      });
    }
  });

  it("names the image as deployment.yaml runs it, for skopeo and podman (index.json), containerd (qualified) and Docker (manifest.json)", () => {
    const deployed = attacherContainer(readDeployment()).image;
    const index = JSON.parse(run(["tar", "-xOf", first, "index.json"])) as { manifests: { digest: string; mediaType: string; size: number; annotations?: Record<string, string> }[] };
    const dockerManifest = JSON.parse(run(["tar", "-xOf", first, "manifest.json"])) as { Config: string; RepoTags: string[]; Layers: string[] }[];
    const members = run(["tar", "-tf", first]).trim().split("\n");
    expect(`${imageName.repository}:${imageName.tag}`).toBe(deployed);
    // One entry, the platform index: containerd stores one image under the name, and each loader picks its platform from it.
    expect(index.manifests).toEqual([
      { digest: skopeoInspect(first).Digest, mediaType: "application/vnd.oci.image.index.v1+json", size: expect.any(Number), annotations: { "org.opencontainers.image.ref.name": deployed, "io.containerd.image.name": qualifiedImageName } },
    ]);
    expect(qualifiedImageName).toBe(`docker.io/library/${deployed}`);
    // Docker's index points at the same blobs: per platform, the config skopeo reads and the layers in the manifest's
    // order; amd64 last, so an engine that loads every entry leaves the tag on amd64.
    const dockerEntry = (architecture: string) => {
      const configDigest = `sha256:${createHash("sha256").update(run(["skopeo", `--override-arch=${architecture}`, "inspect", "--raw", "--config", `oci-archive:${first}`])).digest("hex")}`;
      return { Config: `blobs/${configDigest.replace(":", "/")}`, RepoTags: [deployed], Layers: skopeoInspect(first, architecture).Layers.map((digest) => `blobs/${digest.replace(":", "/")}`) };
    };
    expect(dockerManifest).toEqual([dockerEntry("arm64"), dockerEntry("amd64")]);
    for (const entry of dockerManifest) for (const path of [entry.Config, ...entry.Layers]) expect(members).toContain(path);
  });

  it("gives Docker's loader what it checks: each manifest.json layer, decompressed, hashes to the config's diff_id", () => {
    const entries = JSON.parse(run(["tar", "-xOf", first, "manifest.json"])) as { Config: string; Layers: string[] }[];
    expect(entries).toHaveLength(2);
    for (const entry of entries) {
      const config = JSON.parse(run(["tar", "-xOf", first, entry.Config])) as { rootfs: { diff_ids: string[] } };
      const diffIds = entry.Layers.map((layer) => {
        const gzipped = Bun.spawnSync(["tar", "-xOf", first, layer], { stdout: "pipe", maxBuffer: 512 * 1024 * 1024 }).stdout;
        return `sha256:${createHash("sha256").update(gunzipSync(gzipped)).digest("hex")}`;
      });
      expect(diffIds).toEqual(config.rootfs.diff_ids);
      expect(diffIds).toHaveLength(2);
    }
  });

  it("holds the binary and the base's files, and no shell, package manager or other program", () => {
    const files = walk(unpacked.rootfs);
    const names = files.map((file) => file.path);
    // Anything executable that is not a shared library (the loader and libc are both).
    const programs = files.filter((file) => file.isFile && (file.mode & 0o111) !== 0 && !/\.so(\.\d+)*$/.test(file.path)).map((file) => file.path);
    expect(programs).toEqual(["csi-attacher"]);
    const nonDirectories = files.filter((file) => !file.isDir).map((file) => file.path);
    expect(nonDirectories.filter((path) => /(^|\/)(sh|bash|dash|busybox|dpkg|dpkg-deb|apt|apt-get|apt-cache|perl|python3?)$/.test(path))).toEqual([]);
    expect(names.filter((path) => /^(usr\/)?s?bin(\/|$)/.test(path) || path === "var/lib/dpkg/status" || path.startsWith("var/lib/apt"))).toEqual([]);
    expect(sha256(join(unpacked.rootfs, "csi-attacher"))).toBe(sha256(attacherBinary));

    const owned = (path: string) => files.find((file) => file.path === path);
    expect({ tmp: owned("tmp"), home: owned("home/nonroot") }).toEqual({
      tmp: { path: "tmp", mode: 0o1777, uid: 0, isFile: false, isDir: true },
      home: { path: "home/nonroot", mode: 0o700, uid: 65532, isFile: false, isDir: true },
    });
    expect(readFileSync(join(unpacked.rootfs, "etc/passwd"), "utf8")).toContain("nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n");
    expect(readFileSync(join(unpacked.rootfs, "etc/group"), "utf8")).toContain("nonroot:x:65532:\n");
    for (const lib of ["libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2"]) expect(names.some((path) => path.endsWith(`/${lib}`))).toBe(true);
    expect(names.some((path) => /^lib(64)?\/.*ld-linux-.*\.so\.\d$/.test(path))).toBe(true);

    // What scanners read to know the release and the packages: os-release and distroless-style status.d records of the pinned versions.
    const lock = parsePackageLock(readFileSync(join(import.meta.dir, "../..", packageLockPath), "utf8"));
    const recorded = readdirSync(join(unpacked.rootfs, "var/lib/dpkg/status.d"))
      .sort()
      .map((name) => {
        const record = readFileSync(join(unpacked.rootfs, "var/lib/dpkg/status.d", name), "utf8");
        return `${name} ${/^Version: (.+)$/m.exec(record)?.[1]}`;
      });
    expect(recorded).toEqual([...basePackages].sort().map((name) => `${name} ${pinFor(lock, name, ociArchitecture()).version}`));
    const osRelease = readFileSync(join(unpacked.rootfs, "etc/os-release"), "utf8").split("\n");
    expect(osRelease.filter((line) => line === "ID=debian" || line === 'VERSION_ID="12"').sort()).toEqual(["ID=debian", 'VERSION_ID="12"']);

    // The CA bundle is whole PEM certificates, each one X.509 parses.
    const bundle = readFileSync(join(unpacked.rootfs, "etc/ssl/certs/ca-certificates.crt"), "utf8");
    const certificates = bundle.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? [];
    expect(certificates.length).toBeGreaterThan(100);
    expect(certificates.filter((pem) => new X509Certificate(pem).ca !== true)).toEqual([]);
  });

  it("holds the other CPU's binary on that CPU's base of its own pins, which alone start it (under QEMU)", () => {
    const target = targetFor(crossArchitecture);
    const root = unpackedCross.rootfs;
    const names = walk(root).map((file) => file.path);
    expect(sha256(join(root, "csi-attacher"))).toBe(sha256(crossBinaries[crossArchitecture] ?? "no cross binary"));
    expect(names.filter((path) => /^lib(64)?\/ld-linux-.*\.so\.\d$/.test(path))).toEqual([crossArchitecture === "arm64" ? "lib/ld-linux-aarch64.so.1" : "lib64/ld-linux-x86-64.so.2"]);
    const lock = parsePackageLock(readFileSync(join(import.meta.dir, "../..", packageLockPath), "utf8"));
    const recorded = readdirSync(join(root, "var/lib/dpkg/status.d"))
      .sort()
      .map((name) => /^Architecture: (.+)$/m.exec(readFileSync(join(root, "var/lib/dpkg/status.d", name), "utf8"))?.[1]);
    expect(recorded).toEqual([...basePackages].sort().map((name) => pinFor(lock, name, crossArchitecture).architecture));
    expect(recorded).toContain(crossArchitecture);
    // The image's own loader and libc, and nothing of this machine's, run the binary: -L makes QEMU look there first.
    // The environment names the runtime options the binary would otherwise
    // execute itself again to add: QEMU's user mode, without binfmt_misc, cannot
    // execve an executable of the CPU it emulates (ENOEXEC).
    const runtimeOptions = Object.fromEntries(runtimeReexecEnvironment().map((entry) => entry.split("=") as [string, string]));
    const version = Bun.spawnSync([target.qemuUserStatic, "-L", root, join(root, "csi-attacher"), "--version"], { env: runtimeOptions, stdout: "pipe", stderr: "pipe" });
    const host = parseVersionLine(run([attacherBinary, "--version"]));
    expect({ code: version.exitCode, stderr: version.stderr.toString(), stdout: version.stdout.toString() }).toEqual({
      code: 0,
      stderr: "",
      stdout: `csi-attacher ${host.version} (commit ${host.commit}, ${target.platform})\n`,
    });
  });

  it("converts to a docker-archive with skopeo, keeping its name", () => {
    const docker = join(dir, "docker-archive.tar");
    run(["skopeo", "copy", "--quiet", `oci-archive:${first}`, `docker-archive:${docker}:${qualifiedImageName}`]);
    const manifest = JSON.parse(run(["tar", "-xOf", docker, "manifest.json"])) as { RepoTags: string[]; Layers: string[] }[];
    expect(manifest.map((entry) => ({ tags: entry.RepoTags, layers: entry.Layers.length }))).toEqual([{ tags: [qualifiedImageName], layers: 2 }]);
  });
});
