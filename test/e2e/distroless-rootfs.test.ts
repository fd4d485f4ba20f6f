import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import packageJson from "../../package.json" with { type: "json" };
import { platformOf } from "../../src/cli/version";
import { AdminClient } from "../ground/admin-client";
import { spawnManaged } from "../ground/managed-process";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { launchFakeCsiDriver } from "../ground/fake-csi-driver/launch";
import { AttacherProcess, attacherBinary } from "../ground/attacher-process";
import { buildDistrolessRoot, commandInRoot, kubeconfigInRoot, nonrootId, socketMountPoint } from "./support/distroless-root";
import { csiNode, paths, persistentVolume, volumeAttachment, type VolumeAttachmentJson } from "../ground/objects";
import { runtimeReexecEnvironment } from "./support/runtime-reexec-environment";

/**
 * The binary needs nothing the distroless glibc base image lacks: it runs
 * in a root holding only that base's loader, libc, libm, libpthread, libdl,
 * passwd, group and /tmp, as nonroot, with an empty environment, read-only. This test
 * stands in for building and running deploy/Dockerfile where no container
 * engine exists.
 */
// chroot, mounts and switching to uid 65532 need root; CI runs as root.
const asRoot = process.getuid?.() === 0;
let cluster: TestCluster;
let admin: AdminClient;
let root: string;
let scratch: string;

beforeAll(async () => {
  if (!asRoot) return;
  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  scratch = mkdtempSync(join(tmpdir(), "e2e-rootfs-"));
  root = mkdtempSync(join(tmpdir(), "e2e-rootfs-root-"));
  buildDistrolessRoot(root, attacherBinary, cluster.kubeconfigPath);
});

afterAll(async () => {
  await cluster?.stop();
  for (const dir of [root, scratch]) if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!asRoot)("the binary on a distroless base", () => {
  it("prints its version and build commit with nothing but the base's files, as nonroot, with an empty environment", () => {
    const run = Bun.spawnSync(commandInRoot(root, scratch, ["--version"]));
    expect({ code: run.exitCode, stderr: run.stderr.toString() }).toEqual({ code: 0, stderr: "" });
    expect(run.stdout.toString()).toMatch(new RegExp(`^csi-attacher ${packageJson.version.replaceAll(".", "\\.")} \\(commit ([0-9a-f]{12}(-dirty)?|outside-git), ${platformOf("linux", process.arch)}\\)\\n$`));
  });

  it("attaches a volume against kube-apiserver and a driver on its socket", async () => {
    const driverName = "rootfs.fake.csi.test";
    const node = "rootfs-node";
    const socketDir = join(scratch, "driver");
    mkdirSync(socketDir);
    await using driver = await launchFakeCsiDriver({ directory: socketDir, config: { name: driverName } });
    // In a pod the driver and the sidecar share an emptyDir; here nonroot
    // must be let into the root-owned directory and socket.
    chmodSync(socketDir, 0o755);
    chmodSync(driver.csiSocket, 0o666);
    await admin.create(paths.csiNodes, csiNode(node, [{ name: driverName, nodeID: `${node}-id` }]));
    await admin.create(paths.persistentVolumes, persistentVolume("pv-rootfs", { driver: driverName, volumeHandle: "vol-rootfs" }));
    await admin.create(paths.volumeAttachments, volumeAttachment("va-rootfs", driverName, node, "pv-rootfs"));

    const command = commandInRoot(root, socketDir, [`--kubeconfig=${kubeconfigInRoot}`, `--csi-address=${socketMountPoint}/csi.sock`, "-v=4"]);
    await using attacher = new AttacherProcess(spawnManaged({ name: "attacher-in-root", command, logDir: scratch }));
    await attacher.waitForLog(/"Caches synced"/, 60_000);
    const attached = await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("va-rootfs"), (va) => va?.status?.attached === true, 60_000);
    expect(attached?.status).toEqual({ attached: true, attachmentMetadata: { devicePath: "/dev/fake/vol-rootfs" } });

    // The process that attached is the one in the root, as nonroot, with
    // nothing in its environment but the runtime options it gives
    // itself, on a read-only root file system.
    const pid = attacher.process.pid;
    const uids = /^Uid:\s+(\d+)\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    const rootMount = readFileSync(`/proc/${pid}/mountinfo`, "utf8")
      .split("\n")
      .map((line) => line.split(" "))
      .findLast((fields) => fields[4] === "/");
    expect({
      uids: uids?.slice(1),
      root: readlinkSync(`/proc/${pid}/root`),
      environ: readFileSync(`/proc/${pid}/environ`, "utf8"),
      rootMountOptions: rootMount?.[5]?.split(",")[0],
    }).toEqual({
      uids: [String(nonrootId), String(nonrootId)],
      root,
      environ: runtimeReexecEnvironment()
        .map((entry) => `${entry}\0`)
        .join(""),
      rootMountOptions: "ro",
    });
  });
});
