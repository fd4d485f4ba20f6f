import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { leaderElectionLeaseName } from "../../src/leader/lease-name";
import { AdminClient, type KubeObject } from "../ground/admin-client";
import { freeLoopbackPorts } from "../ground/free-ports";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { launchFakeCsiDriver, type FakeCsiDriver } from "../ground/fake-csi-driver/launch";
import { attacherBinary } from "../ground/attacher-process";
import { translateAttacherContainer, type ContainerRunSpec, type TestGround } from "../ground/container-run-spec";
import { attacherContainer, deploymentNamespace, readDeployment } from "../ground/deployment-manifest";
import { csiNode, paths, persistentVolume, volumeAttachment, type VolumeAttachmentJson } from "../ground/objects";
import { checkRbacCoversDeployment, readRbacManifest } from "../ground/rbac-manifest";
import { runtimeConfig } from "./support/runc-bundle";
import { RuncContainer, runcGroundProblem } from "./support/runc-container";
import { buildSidecarImage, imageConfigOf, run, unpackImage, type UnpackedImage } from "./support/sidecar-image";
import { upstreamRbacKubeconfig, upstreamServiceAccount } from "./support/upstream-rbac";
import { runtimeReexecEnvironment } from "./support/runtime-reexec-environment";

/**
 * The image `bun run image` builds, run by Debian's runc as
 * deploy/kubernetes/deployment.yaml's csi-attacher container says, against
 * the test ground: its args, env, user, security context, mounts and memory
 * limit come from parsing the manifest (container-run-spec.ts), the
 * service account and its rights from rbac.yaml. What differs from a
 * kubelet's pod, and why, is said in container-run-spec.ts and runc-bundle.ts.
 */
const driverName = "runc.fake.csi.test";
const node = "runc-node";
const podName = "csi-attacher-runc-0";
/** uid and gid of distroless's nonroot, which deployment.yaml asks for. */
const nonroot = 65532;

let cluster: TestCluster | undefined;
let admin: AdminClient;
let dir: string;
let image: UnpackedImage;
let archive: string;
let ground: TestGround;
let spec: ContainerRunSpec;
let driver: FakeCsiDriver | undefined;
let attacher: RuncContainer | undefined;

/** bundleConfig is the runtime config for `run` in a cgroup of its own. */
function bundleConfig(run: ContainerRunSpec, id: string) {
  return runtimeConfig({ base: image.config, run, rootfs: image.rootfs, hostname: podName, cgroupsPath: `/${id}` });
}

beforeAll(async () => {
  const problem = runcGroundProblem();
  if (problem !== undefined) throw new Error(problem);
  dir = mkdtempSync(join(tmpdir(), "e2e-runc-"));
  archive = join(dir, "image.tar");
  buildSidecarImage(archive);
  image = unpackImage(archive, join(dir, "image"));
  // The binary was just written: drop its pages from the page cache so the
  // container's reads charge them to its own memory cgroup, as on a fresh node.
  run(["dd", `if=${join(image.rootfs, "csi-attacher")}`, "iflag=nocache", "count=0", "status=none"]);

  cluster = await startTestCluster();
  admin = new AdminClient(cluster);
  const deployment = readDeployment();
  // A kubelet makes an emptyDir 0777; the driver's socket goes in it.
  const socketDir = join(dir, "socket-dir");
  mkdirSync(socketDir);
  chmodSync(socketDir, 0o777);
  const serviceAccountDir = join(dir, "serviceaccount");
  mkdirSync(serviceAccountDir);
  const containerPorts = (attacherContainer(deployment).ports ?? []).map((port) => port.containerPort);
  const free = await freeLoopbackPorts(containerPorts.map(String));
  const api = new URL(cluster.server);
  ground = {
    emptyDirs: { "socket-dir": socketDir },
    serviceAccountDir,
    apiServer: { host: api.hostname, port: api.port },
    hostPorts: Object.fromEntries(containerPorts.map((port) => [port, free[String(port)] ?? 0])),
    podName,
    nodeName: node,
    podIP: "127.0.0.1",
  };
  spec = translateAttacherContainer(deployment, imageConfigOf(archive), ground);

  // The service account deployment.yaml names must be the one rbac.yaml
  // binds; the test runs as it, with a token, under exactly rbac.yaml's objects.
  const account = checkRbacCoversDeployment(deployment, spec, readRbacManifest());
  expect(account).toEqual(upstreamServiceAccount);
  const user = await upstreamRbacKubeconfig(cluster, admin, dir);
  // What the kubelet projects into every pod's service account volume (mode 0644).
  for (const [file, content] of [["token", user.token], ["ca.crt", cluster.caPem], ["namespace", account.namespace]] as const) {
    writeFileSync(join(serviceAccountDir, file), content);
    chmodSync(join(serviceAccountDir, file), 0o644);
  }

  driver = await launchFakeCsiDriver({ directory: dirname(spec.csiSocketHostPath), config: { name: driverName } });
  if (driver.csiSocket !== spec.csiSocketHostPath) throw new Error(`the fake driver serves ${driver.csiSocket}, but the manifest has the attacher dial ${spec.csiSocketHostPath}`);
  // The driver runs as root here; a real one must leave its socket
  // connectable by the sidecar's uid (deployment.yaml says so), as this does.
  chmodSync(driver.csiSocket, 0o666);
  await admin.create(paths.csiNodes, csiNode(node, [{ name: driverName, nodeID: `${node}-id` }]));

  const id = `e2e-runc-${process.pid}-attacher`;
  attacher = RuncContainer.start({ id, bundle: join(dir, "bundle-attacher"), config: bundleConfig(spec, id), logDir: dir });
  await attacher.waitForLog(/"Caches synced"/, 60_000);
}, 180_000);

afterAll(async () => {
  await attacher?.[Symbol.asyncDispose]();
  await driver?.[Symbol.asyncDispose]();
  await cluster?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** status is /proc/<pid>/status as name -> value. */
function procStatus(pid: number): Record<string, string> {
  return Object.fromEntries(
    readFileSync(`/proc/${pid}/status`, "utf8")
      .split("\n")
      .map((line) => line.split(/:\s*/, 2) as [string, string])
      .filter(([, value]) => value !== undefined),
  );
}

describe("the image under runc, as deploy/kubernetes/deployment.yaml runs it", () => {
  it("prints its version from the image's entrypoint, as the Deployment's user", async () => {
    const id = `e2e-runc-${process.pid}-version`;
    const version = translateAttacherContainer(readDeployment(), imageConfigOf(archive), ground, { argsOverride: ["--version"] });
    await using container = RuncContainer.start({ id, bundle: join(dir, "bundle-version"), config: bundleConfig(version, id), logDir: dir });
    const code = await container.process.exited;
    expect({ code, stdout: container.stdout(), stderr: container.log() }).toEqual({ code: 0, stdout: run([attacherBinary, "--version"]), stderr: "" });
  });

  it("runs as uid and gid 65532 with no capabilities, no new privileges, a read-only root, the host's network and the memory limit", () => {
    if (attacher === undefined) throw new Error("the attacher container did not start");
    const memoryLimit = spec.memoryLimitBytes;
    if (memoryLimit === undefined) throw new Error("deployment.yaml's csi-attacher container sets no resources.limits.memory");
    const pid = attacher.pid();
    const status = procStatus(pid);
    const rootMount = readFileSync(`/proc/${pid}/mountinfo`, "utf8")
      .split("\n")
      .map((line) => line.split(" "))
      .find((fields) => fields[4] === "/");
    expect({
      uid: status["Uid"]?.split(/\s+/),
      gid: status["Gid"]?.split(/\s+/),
      capabilities: [status["CapInh"], status["CapPrm"], status["CapEff"], status["CapBnd"], status["CapAmb"]],
      noNewPrivs: status["NoNewPrivs"],
      rootMount: rootMount?.[5]?.split(",")[0],
      network: readlinkSync(`/proc/${pid}/ns/net`),
      ownMountNamespace: readlinkSync(`/proc/${pid}/ns/mnt`) !== readlinkSync("/proc/self/ns/mnt"),
      memoryLimit: attacher.memoryUse().limitBytes,
      environ: readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter((entry) => entry !== "").sort(),
      runtimeOptionsTheImageLacks: runtimeReexecEnvironment().filter((entry) => !spec.env.includes(entry)),
    }).toEqual({
      uid: Array(4).fill(String(nonroot)),
      gid: Array(4).fill(String(nonroot)),
      capabilities: Array(5).fill("0000000000000000"),
      noNewPrivs: "1",
      rootMount: "ro",
      network: readlinkSync("/proc/self/ns/net"),
      ownMountNamespace: true,
      memoryLimit,
      // runc adds HOME from the image's /etc/passwd when the env has none, as containerd does. The runtime options
      // come from the image's config, so the attacher starts once and adds nothing of its own.
      environ: [...spec.env, "HOME=/home/nonroot"].sort(),
      runtimeOptionsTheImageLacks: [],
    });
  });

  it("holds the leader Lease in the Deployment's namespace (POD_NAMESPACE) under its pod's hostname", async () => {
    const namespace = deploymentNamespace(readDeployment());
    const lease = await admin.get<KubeObject & { spec?: { holderIdentity?: string } }>(`/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${leaderElectionLeaseName(driverName)}`);
    expect(lease.spec?.holderIdentity).toBe(podName);
  });

  it("answers the Deployment's readiness and liveness probes", async () => {
    const probes = [spec.readinessProbe, spec.livenessProbe];
    const answers = await Promise.all(
      probes.map(async (probe) => {
        if (probe === undefined) return undefined;
        const res = await fetch(`http://127.0.0.1:${probe.hostPort}${probe.path}`);
        await res.text();
        return res.status;
      }),
    );
    expect(answers).toEqual([200, 200]);
  });

  it("attaches a VolumeAttachment through the driver's socket, and detaches it once deleted", async () => {
    if (cluster === undefined) throw new Error("no cluster");
    await admin.create(paths.persistentVolumes, persistentVolume("pv-runc", { driver: driverName, volumeHandle: "vol-runc" }));
    await admin.create(paths.volumeAttachments, volumeAttachment("va-runc", driverName, node, "pv-runc"));
    const attached = await admin.waitFor<VolumeAttachmentJson>(paths.volumeAttachment("va-runc"), (va) => va?.status?.attached === true, 60_000);
    expect(attached?.status).toEqual({ attached: true, attachmentMetadata: { devicePath: "/dev/fake/vol-runc" } });
    await admin.delete(paths.volumeAttachment("va-runc"));
    await admin.waitFor(paths.volumeAttachment("va-runc"), (va) => va === null, 60_000);
    const calls = (await driver?.control.calls()) ?? [];
    expect(calls.filter((call) => call.method === "ControllerPublishVolume" || call.method === "ControllerUnpublishVolume").map((call) => call.method)).toEqual([
      "ControllerPublishVolume",
      "ControllerUnpublishVolume",
    ]);
    expect(attacher?.log()).not.toMatch(/forbidden/i);
  });

  it("runs within its memory limit, never OOM-killed", () => {
    if (attacher === undefined) throw new Error("the attacher container did not start");
    const memory = attacher.memoryUse();
    const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
    // Page cache counts too (the binary's pages it read): a limit near the peak
    // makes the kernel reclaim it (failcnt grows) before anything is killed,
    // so failcnt is reported, and only an OOM kill or a dead container fails.
    console.log(
      `runc container memory: max usage ${mib(memory.maxUsageBytes)} MiB of a ${mib(memory.limitBytes)} MiB limit ` +
        `(now: rss ${mib(memory.rssBytes)} MiB, page cache ${mib(memory.cacheBytes)} MiB; failcnt ${memory.failCount}, oom kills ${memory.oomKills})`,
    );
    expect({ oomKills: memory.oomKills, running: attacher.process.running, withinLimit: memory.maxUsageBytes <= memory.limitBytes }).toEqual({ oomKills: 0, running: true, withinLimit: true });
  });

  it("exits 0 on SIGTERM within the pod's termination grace period, which covers the drain it announces", async () => {
    if (attacher === undefined) throw new Error("the attacher container did not start");
    const started = performance.now();
    attacher.kill("TERM");
    let timer: ReturnType<typeof setTimeout> | undefined;
    const graceOver = new Promise<"grace period over">((resolve) => {
      timer = setTimeout(() => resolve("grace period over"), spec.gracePeriodMs);
    });
    const outcome = await Promise.race([attacher.process.exited, graceOver]);
    clearTimeout(timer);
    const tookMs = performance.now() - started;
    expect({ outcome, withinGrace: tookMs < spec.gracePeriodMs }).toEqual({ outcome: 0, withinGrace: true });
    // Idle, it left at once; busy, it drains for as long as it announced. The
    // kubelet must not kill it before: the manifest's grace period covers that.
    const drainMs = Number(/"Received signal, shutting down".*drainTimeout="(\d+)ms"/.exec(attacher.log())?.[1]);
    expect({ drainMs, coveredByGrace: drainMs < spec.gracePeriodMs }).toEqual({ drainMs: expect.any(Number), coveredByGrace: true });
    attacher.delete();
    expect(Bun.spawnSync(["runc", "state", attacher.id], { stdout: "ignore", stderr: "ignore" }).exitCode).not.toBe(0);
  });
});
