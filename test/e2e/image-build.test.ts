import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { X509Certificate, createHash } from "node:crypto";
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { gunzipSync } from "node:zlib";
import { basePackages } from "../../scripts/image/base-rootfs";
import { imageName, ociArchitecture, parseVersionLine, qualifiedImageName } from "../../scripts/image/image-identity";
import { packageLockPath, parsePackageLock, pinFor } from "../../scripts/image/pinned-packages";
import { attacherBinary } from "./support/attacher-process";
import { attacherContainer, readDeployment } from "./support/deployment-manifest";
import { buildSidecarImage, imageConfigOf, imageGroundProblem, run, skopeoInspect, unpackImage, type UnpackedImage } from "./support/sidecar-image";

/**
 * `bun run image` builds the sidecar image without a container engine: an
 * OCI archive, reproducible, that names itself as deployment.yaml runs it,
 * holding the binary on a distroless-like base with nothing that could run
 * a command. test/e2e/runc-deployment.test.ts runs it.
 */
let dir: string;
let first: string;
let second: string;
let unpacked: UnpackedImage;

beforeAll(() => {
  const problem = imageGroundProblem();
  if (problem !== undefined) throw new Error(problem);
  dir = mkdtempSync(join(tmpdir(), "e2e-image-"));
  first = join(dir, "first.tar");
  second = join(dir, "second.tar");
  buildSidecarImage(first);
  buildSidecarImage(second);
  unpacked = unpackImage(first, join(dir, "unpacked"));
}, 120_000);

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

describe("bun run image", () => {
  it("gives the same digest, and the same archive bytes, when built twice from the same binary", () => {
    const digests = [skopeoInspect(first).Digest, skopeoInspect(second).Digest];
    expect(digests[0]).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect({ digest: digests[1], bytes: sha256(second) }).toEqual({ digest: digests[0], bytes: sha256(first) });
  });

  it("runs /csi-attacher as 65532:65532 and labels the version and commit the binary reports", () => {
    const binary = parseVersionLine(run([attacherBinary, "--version"]));
    const config = imageConfigOf(first);
    expect({ entrypoint: config.Entrypoint, cmd: config.Cmd ?? null, user: config.User, version: config.Labels?.["org.opencontainers.image.version"], revision: config.Labels?.["org.opencontainers.image.revision"] }).toEqual({
      entrypoint: ["/csi-attacher"],
      cmd: null,
      user: "65532:65532",
      version: binary.version,
      revision: binary.commit,
    });
  });

  it("names the image as deployment.yaml runs it, for skopeo and podman (index.json), containerd (qualified) and Docker (manifest.json)", () => {
    const deployed = attacherContainer(readDeployment()).image;
    const index = JSON.parse(run(["tar", "-xOf", first, "index.json"])) as { manifests: { digest: string; mediaType: string; size: number; annotations?: Record<string, string> }[] };
    const dockerManifest = JSON.parse(run(["tar", "-xOf", first, "manifest.json"])) as { Config: string; RepoTags: string[]; Layers: string[] }[];
    const members = run(["tar", "-tf", first]).trim().split("\n");
    const inspected = skopeoInspect(first);
    const configDigest = `sha256:${createHash("sha256").update(run(["skopeo", "inspect", "--raw", "--config", `oci-archive:${first}`])).digest("hex")}`;
    expect(`${imageName.repository}:${imageName.tag}`).toBe(deployed);
    expect(index.manifests).toEqual([
      { digest: inspected.Digest, mediaType: "application/vnd.oci.image.manifest.v1+json", size: expect.any(Number), annotations: { "org.opencontainers.image.ref.name": deployed, "io.containerd.image.name": qualifiedImageName } },
    ]);
    expect(qualifiedImageName).toBe(`docker.io/library/${deployed}`);
    // Docker's index points at the same blobs: the config skopeo reads and the layers in the manifest's order.
    expect(dockerManifest).toEqual([{ Config: `blobs/${configDigest.replace(":", "/")}`, RepoTags: [deployed], Layers: inspected.Layers.map((digest) => `blobs/${digest.replace(":", "/")}`) }]);
    for (const path of [dockerManifest[0]?.Config ?? "", ...(dockerManifest[0]?.Layers ?? [])]) expect(members).toContain(path);
  });

  it("gives Docker's loader what it checks: each manifest.json layer, decompressed, hashes to the config's diff_id", () => {
    const [entry] = JSON.parse(run(["tar", "-xOf", first, "manifest.json"])) as { Config: string; Layers: string[] }[];
    const config = JSON.parse(run(["tar", "-xOf", first, entry?.Config ?? "manifest.json names no config"])) as { rootfs: { diff_ids: string[] } };
    const diffIds = (entry?.Layers ?? []).map((layer) => {
      const gzipped = Bun.spawnSync(["tar", "-xOf", first, layer], { stdout: "pipe", maxBuffer: 512 * 1024 * 1024 }).stdout;
      return `sha256:${createHash("sha256").update(gunzipSync(gzipped)).digest("hex")}`;
    });
    expect(diffIds).toEqual(config.rootfs.diff_ids);
    expect(diffIds).toHaveLength(2);
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

  it("converts to a docker-archive with skopeo, keeping its name", () => {
    const docker = join(dir, "docker-archive.tar");
    run(["skopeo", "copy", "--quiet", `oci-archive:${first}`, `docker-archive:${docker}:${qualifiedImageName}`]);
    const manifest = JSON.parse(run(["tar", "-xOf", docker, "manifest.json"])) as { RepoTags: string[]; Layers: string[] }[];
    expect(manifest.map((entry) => ({ tags: entry.RepoTags, layers: entry.Layers.length }))).toEqual([{ tags: [qualifiedImageName], layers: 2 }]);
  });
});
