import { $ } from "bun";
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { dropPageCache } from "../ground/memory-cgroup";
import { leaderElectionLeaseName } from "../../src/leader/lease-name";
import { AdminClient, type KubeObject } from "../ground/admin-client";
import { ensureComponents, type ComponentPaths } from "../ground/components";
import { errorMessage, waitForCondition } from "../ground/managed-process";
import { fixedHostPaths } from "../ground/node/host-paths";
import { startNodePlugin } from "../ground/node/node-plugin";
import { nodeClusterOptions, nodeImages, startNodeGround, type NodeGround } from "../ground/node/node-ground";
import { mockDriverDeployment, type DeploymentJson } from "../ground/node/mock-driver-deployment";
import { nodeLockHolder } from "../ground/node/node-lock";
import { nodeGroundProblem } from "../ground/node/node-prerequisites";
import { packStaticImage } from "../ground/node/static-image";
import { startTestCluster, type TestCluster } from "../ground/test-cluster";
import { applyObjects } from "../ground/apply-manifest";
import { attacherContainerName } from "../ground/deployment-manifest";
import { persistentVolume } from "../ground/objects";
import { csiTestClient } from "../ground/csi-test-client";
import { createSharedVolumes } from "./support/mock-driver-volumes";
import { attachmentName, attachRequiredCsiDriver, claimFor, claimingPod, podPaths } from "../ground/pod-objects";
import { parseSamples } from "../ground/prometheus-text";
import { readRbacManifest } from "../ground/rbac-manifest";
import { recommendedMemoryLimit } from "./support/readme-memory-limits";

/**
 * deploy/kubernetes/rbac.yaml and deployment.yaml on a real node: a kubelet
 * and containerd (the node ground, test/ground/node) read the manifests,
 * mount the service-account token, run the probes and enforce the security
 * context and the memory limit (issue 27). The one change to the manifests
 * is the placeholder csi-driver container, which becomes Kubernetes' mock
 * CSI driver, packed into an image here.
 *
 * The node ground takes host paths the kubelet and containerd fix, so one
 * node runs per machine: this is the only test file that starts one, and a
 * second start (a person's `bun run start --with-node` at the same time)
 * fails naming the process whose ground holds the node lock (node-lock.ts).
 */
const driverName = "node-ground.csi.test";
const imageArchive = join(import.meta.dir, "../../dist/csi-attacher-image.tar");
/** The name the Deployment's `bun-csi-attacher:latest` resolves to, which index.json's io.containerd.image.name gives the import. */
const qualifiedImage = "docker.io/library/bun-csi-attacher:latest";
/** deploy/kubernetes/deployment.yaml's limits.memory, 112Mi. */
const memoryLimitBytes = 112 * 1024 * 1024;
const nonroot = 65532;
/** The smallest row of README's memory table (an edge or k3s cluster), whose limit the tight-memory test runs at. */
const edgeVolumeCount = 30;

let components: ComponentPaths;
let cluster: TestCluster | undefined;
let node: NodeGround | undefined;
let admin: AdminClient;
let namespace: string;
let readyAt = 0;
/** The driver's node side, once the volume test started it. */
let nodePlugin: Awaited<ReturnType<typeof startNodePlugin>> | undefined;

/** A container state as the kubelet reports it; `terminated.reason` is "OOMKilled" when the kernel killed it at its limit. */
interface ContainerStateJson {
  terminated?: { reason?: string; exitCode?: number };
}
interface PodJson extends KubeObject {
  status?: {
    phase?: string;
    podIP?: string;
    containerStatuses?: { name: string; ready: boolean; restartCount: number; containerID?: string; image: string; state?: ContainerStateJson; lastState?: ContainerStateJson }[];
  };
}
interface LeaseJson extends KubeObject {
  spec?: { holderIdentity?: string; leaseDurationSeconds?: number };
}

function deploymentPath(): string {
  return `/apis/apps/v1/namespaces/${namespace}/deployments/csi-attacher`;
}

async function attacherPods(): Promise<PodJson[]> {
  const pods = await admin.list<PodJson>(`/api/v1/namespaces/${namespace}/pods`, { labelSelector: "app=csi-attacher" });
  return pods.items.filter((pod) => pod.metadata?.deletionTimestamp === undefined);
}

function containerStatus(pod: PodJson, name: string) {
  const status = pod.status?.containerStatuses?.find((container) => container.name === name);
  if (status === undefined) throw new Error(`pod ${pod.metadata?.name} has no ${name} status`);
  return status;
}

function attacherStatus(pod: PodJson) {
  return containerStatus(pod, attacherContainerName);
}

/** memoryCgroupDir is the cgroup v1 memory directory a process runs in (the kubelet makes one per container). */
function memoryCgroupDir(pid: number): string {
  const memoryCgroup = readFileSync(`/proc/${pid}/cgroup`, "utf8")
    .split("\n")
    .map((line) => line.split(":"))
    .find((fields) => fields[1]?.split(",").includes("memory"))?.[2];
  return join("/sys/fs/cgroup/memory", memoryCgroup ?? "/nowhere");
}

function leasePath(): string {
  return `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${leaderElectionLeaseName(driverName)}`;
}

/** The attacher container's log file, as the kubelet writes it (CRI format: time, stream, tag, line). */
function containerLogPath(pod: PodJson): string {
  return join(fixedHostPaths.podLogs, `${namespace}_${pod.metadata?.name}_${pod.metadata?.uid}`, attacherContainerName, "0.log");
}

/** attacherLogs is what every attacher container of the Deployment has logged so far. */
async function attacherLogs(): Promise<string> {
  return (await attacherPods())
    .map((pod) => containerLogPath(pod))
    .filter((path) => existsSync(path))
    .map((path) => readFileSync(path, "utf8"))
    .join("");
}

/** createClaimedPod creates a PV for one of the mock driver's volumes (see mock-driver-volumes.ts), a claim bound to it, and a Pod using it. */
async function createClaimedPod(name: string, volumeHandle: string): Promise<void> {
  await admin.create("/api/v1/persistentvolumes", persistentVolume(`pv-${name}`, { driver: driverName, volumeHandle }));
  await admin.create(podPaths.claims(namespace), claimFor(`claim-${name}`, `pv-${name}`));
  await admin.create(podPaths.pods(namespace), claimingPod(name, nodeImages.pause, `claim-${name}`));
}

/** The VolumeAttachment the attach/detach controller makes for one of the driver's volumes on the node. */
function volumeAttachmentPath(volumeHandle: string): string {
  return `/apis/storage.k8s.io/v1/volumeattachments/${attachmentName(volumeHandle, driverName, node?.nodeName ?? "")}`;
}

interface VolumeAttachmentJson extends KubeObject {
  status?: { attached?: boolean };
}

/**
 * deleteLeaderThenAttach deletes the Lease holder's pod and at once asks for
 * the next Pod's volume, which only the next leader can attach; it returns
 * the times from the delete to another replica holding the Lease and to
 * the volume attached, and the deleted leader's log as it last stood (the
 * kubelet removes it with the pod).
 */
async function deleteLeaderThenAttach(pod: string, volumeHandle: string): Promise<{ takeoverMs: number; attachedMs: number; leaseMs: number; log: string }> {
  const lease = await admin.get<LeaseJson>(leasePath());
  const leaderName = lease.spec?.holderIdentity ?? "";
  const leader = (await attacherPods()).find((found) => found.metadata?.name === leaderName);
  if (leader === undefined) throw new Error(`the Lease holder ${leaderName} is none of the pods`);
  const logPath = containerLogPath(leader);
  let log = "";
  const follow = setInterval(() => {
    if (existsSync(logPath)) log = readFileSync(logPath, "utf8");
  }, 50);
  try {
    const deletedAt = performance.now();
    await admin.delete(`/api/v1/namespaces/${namespace}/pods/${leaderName}`);
    await createClaimedPod(pod, volumeHandle);
    // The standby, or the replacement the ReplicaSet starts at once, whichever asks first.
    await admin.waitFor<LeaseJson>(leasePath(), (found) => ![leaderName, "", undefined].includes(found?.spec?.holderIdentity), 60_000).catch(async (e: unknown) => {
      throw new Error(`${errorMessage(e)}\nthe deleted leader's log:\n${log}\nthe other attachers' logs:\n${await attacherLogs()}`);
    });
    const takeoverMs = performance.now() - deletedAt;
    await admin.waitFor<VolumeAttachmentJson>(volumeAttachmentPath(volumeHandle), (found) => found?.status?.attached === true, 60_000);
    const attachedMs = performance.now() - deletedAt;
    await waitForCondition(() => !existsSync(logPath), { description: `the deleted leader's pod to be gone (${logPath})`, timeoutMs: 90_000 });
    return { takeoverMs, attachedMs, leaseMs: (lease.spec?.leaseDurationSeconds ?? 0) * 1000, log };
  } finally {
    clearInterval(follow);
  }
}

/** The host's way to a pod's csi-driver socket: through the container task's root, at the path the attacher's ADDRESS names. */
function driverSocket(pod: PodJson, address: string): string {
  if (node === undefined) throw new Error("the node ground did not start");
  return `/proc/${node.containerd.taskPid(containerStatus(pod, "csi-driver").containerID ?? "")}/root${address}`;
}

/** publishedVolumes lists the IDs the mock driver on `socket` holds published to `nodeId` (it records a publish as the key "<nodeID>/dev"). */
async function publishedVolumes(socket: string, nodeId: string): Promise<string[]> {
  const listing = await csiTestClient(socket).listVolumes({});
  return listing.entries.filter((entry) => entry.volume?.volumeContext[`${nodeId}/dev`] !== undefined).map((entry) => entry.volume?.volumeId ?? "");
}

/** oomKilledContainers names each container of `pods` whose state or last state the kubelet reports as OOMKilled. */
function oomKilledContainers(pods: readonly PodJson[]): string[] {
  return pods.flatMap((pod) =>
    (pod.status?.containerStatuses ?? [])
      .filter((container) => [container.state, container.lastState].some((state) => state?.terminated?.reason === "OOMKilled"))
      .map((container) => `${pod.metadata?.name}/${container.name}`),
  );
}

/**
 * sampleAttacherMemory reads an attacher's own memory metrics every second
 * until stopped, and keeps the highest: its resident set and the anonymous
 * part of it (the rest is the binary's pages, which the kernel can evict
 * under the limit).
 */
function sampleAttacherMemory(podIP: string): { stop(): { residentBytes: number; anonymousBytes: number } } {
  const peaks = { residentBytes: 0, anonymousBytes: 0 };
  const sample = async () => {
    const samples = parseSamples(await (await fetch(`http://${podIP}:8080/metrics`)).text());
    const value = (name: string) => samples.find((found) => found.name === name)?.value ?? 0;
    peaks.residentBytes = Math.max(peaks.residentBytes, value("process_resident_memory_bytes"));
    peaks.anonymousBytes = Math.max(peaks.anonymousBytes, value("csi_attacher_resident_anonymous_memory_bytes"));
  };
  const timer = setInterval(() => {
    // A missed sample only lowers the peak reported, never a result asserted.
    sample().catch(() => undefined);
  }, 1000);
  return {
    stop: () => {
      clearInterval(timer);
      return peaks;
    },
  };
}

async function waitForReadyReplicas(count: number): Promise<void> {
  await admin.waitFor<DeploymentJson>(deploymentPath(), (deployment) => deployment?.status?.readyReplicas === count && deployment.status.replicas === count, 120_000);
}

beforeAll(async () => {
  const problem = nodeGroundProblem();
  if (problem !== undefined) throw new Error(problem);
  if (!existsSync(imageArchive)) throw new Error(`${imageArchive} is missing: run \`bun run image\` first (bun run test does)`);
  components = await ensureComponents();
  cluster = await startTestCluster({ components, ...nodeClusterOptions });
  admin = new AdminClient(cluster);
  const started = performance.now();
  node = await startNodeGround({ cluster, components });
  console.log(`node ground Ready in ${Math.round(performance.now() - started)} ms`);
});

afterAll(async () => {
  await nodePlugin?.process.stop();
  await node?.stop();
  await cluster?.stop();
});

describe("the Deployment as written, on a kubelet and containerd", () => {
  it("imports dist/csi-attacher-image.tar with `ctr -n k8s.io images import` under the name the Deployment's image resolves to", () => {
    if (node === undefined) throw new Error("the node ground did not start");
    node.containerd.importImage(imageArchive);
    expect(node.containerd.imageNames()).toContain(qualifiedImage);
  });

  it("refuses a second node ground on the machine, naming the process whose ground runs", async () => {
    if (cluster === undefined) throw new Error("the cluster did not start");
    await expect(startNodeGround({ cluster, components })).rejects.toThrow(`the node ground of process ${process.pid} (`);
    // Refused before it touched anything: the running ground still holds the lock and its node stays Ready.
    expect(nodeLockHolder()?.pid).toBe(process.pid);
  });

  it("runs rbac.yaml and deployment.yaml (only the csi-driver container swapped): both replicas Running and Ready from the imported image", async () => {
    const rbac = readRbacManifest();
    await applyObjects(admin, rbac);
    const deployment = mockDriverDeployment(driverName);
    namespace = deployment.metadata?.namespace ?? "default";
    await applyObjects(admin, [deployment]);
    await waitForReadyReplicas(2);
    readyAt = performance.now();
    const pods = await attacherPods();
    expect(pods.map((pod) => ({ phase: pod.status?.phase, ready: pod.status?.containerStatuses?.every((container) => container.ready), image: attacherStatus(pod).image }))).toEqual([
      { phase: "Running", ready: true, image: qualifiedImage },
      { phase: "Running", ready: true, image: qualifiedImage },
    ]);
  });

  it("runs the attacher as uid 65532 with a read-only root and the manifest's memory limit in its cgroup", async () => {
    if (node === undefined) throw new Error("the node ground did not start");
    for (const pod of await attacherPods()) {
      const pid = node.containerd.taskPid(attacherStatus(pod).containerID ?? "");
      const status = Object.fromEntries(
        readFileSync(`/proc/${pid}/status`, "utf8")
          .split("\n")
          .map((line) => line.split(/:\s*/, 2) as [string, string]),
      );
      const rootMount = readFileSync(`/proc/${pid}/mountinfo`, "utf8")
        .split("\n")
        .map((line) => line.split(" "))
        .find((fields) => fields[4] === "/");
      const limit = Number(readFileSync(join(memoryCgroupDir(pid), "memory.limit_in_bytes"), "utf8"));
      expect({ uid: status["Uid"]?.split(/\s+/)[0], gid: status["Gid"]?.split(/\s+/)[0], root: rootMount?.[5]?.split(",")[0], limit }).toEqual({
        uid: String(nonroot),
        gid: String(nonroot),
        root: "ro",
        limit: memoryLimitBytes,
      });
    }
  });

  it("lets exactly one replica hold the Lease, under its pod's name (the pod's hostname)", async () => {
    const names = (await attacherPods()).map((pod) => pod.metadata?.name);
    const lease = await admin.waitFor<LeaseJson>(leasePath(), (found) => (found?.spec?.holderIdentity ?? "") !== "", 60_000);
    expect(names).toContain(lease?.spec?.holderIdentity);
  });

  it("answers the README's probes on each pod's IP: /readyz and /healthz/leader-election", async () => {
    for (const pod of await attacherPods()) {
      const answers = await Promise.all(["/readyz", "/healthz/leader-election"].map(async (path) => (await fetch(`http://${pod.status?.podIP}:8080${path}`)).status));
      expect(answers).toEqual([200, 200]);
    }
  });

  it("keeps both replicas Ready with no restart for a minute", async () => {
    const remaining = readyAt + 60_000 - performance.now();
    if (remaining > 0) await Bun.sleep(remaining);
    const pods = await attacherPods();
    expect(pods.map((pod) => pod.status?.containerStatuses?.map((container) => [container.name, container.ready, container.restartCount]))).toEqual([
      [
        [attacherContainerName, true, 0],
        ["csi-driver", true, 0],
      ],
      [
        [attacherContainerName, true, 0],
        ["csi-driver", true, 0],
      ],
    ]);
  });

  it("gives a Pod its volume: the kubelet registers the driver's node side, the attach/detach controller asks, our attacher publishes with the CSINode's node ID; deleting the Pod detaches", async () => {
    if (node === undefined || cluster === undefined) throw new Error("the node ground did not start");
    const plugin = await startNodePlugin({ binary: components.mockCsiDriver, driverName, nodeName: node.nodeName, admin, logDir: join(cluster.dir, "node") });
    nodePlugin = plugin;
    await admin.create(podPaths.csiDrivers, attachRequiredCsiDriver(driverName));
    await createClaimedPod("app-1", "1");
    const vaPath = volumeAttachmentPath("1");
    const va = await admin.waitFor<VolumeAttachmentJson>(vaPath, (found) => found?.status?.attached === true, 60_000);
    expect(va?.metadata?.annotations?.["csi.alpha.kubernetes.io/node-id"]).toBe(plugin.nodeId);
    // The kubelet staged and published it (the mock's NodePublish made the target), and the Pod runs.
    await admin.waitFor<PodJson>(podPaths.pod(namespace, "app-1"), (pod) => pod?.status?.phase === "Running", 60_000);

    await admin.delete(podPaths.pod(namespace, "app-1"));
    await admin.waitFor(vaPath, (found) => found === null, 60_000);
    const logs = await attacherLogs();
    expect([logs.match(/"Attached" va="csi-/g)?.length, logs.match(/"Detached" va="csi-/g)?.length]).toEqual([1, 1]);
  });

  it("hands the Lease over when the leader's pod is deleted: the attacher drains as part of the shutdown, releases it, and another replica leads before it would have expired", async () => {
    const { takeoverMs, attachedMs, leaseMs, log } = await deleteLeaderThenAttach("app-2", "2");
    console.log(`ours: leader pod deleted to another replica holding the Lease ${Math.round(takeoverMs)} ms, to the next Pod's volume attached ${Math.round(attachedMs)} ms (lease duration ${leaseMs} ms)`);
    // On failure, what the deleted leader said is what explains it.
    if (takeoverMs >= leaseMs) console.log(`the deleted leader's log:\n${log}`);
    // Which the kubelet stopped first, the driver or the attacher, varies with the node's load: the hand-over must not.
    else console.log(`the deleted leader's shutdown:\n${log.split("\n").filter((line) => /Received signal|CSI driver connection lost|CSI driver went away|Released leader lease|Lost connection/.test(line)).join("\n")}`);
    expect({ takeoverBeforeExpiry: takeoverMs < leaseMs, attachedBeforeExpiry: attachedMs < leaseMs }).toEqual({ takeoverBeforeExpiry: true, attachedBeforeExpiry: true });
    expect(log).toContain('"Received signal, shutting down"');
    expect(log).toContain('"Released leader lease"');
    expect(log).not.toContain("Lost connection to CSI driver");
    // The Deployment replaces the pod.
    await waitForReadyReplicas(2);
  });
  it("reports the same hand-over for the Go sidecar v4.13.0 in the same Deployment (its image built from the Go module the bench builds)", async () => {
    if (node === undefined || cluster === undefined) throw new Error("the node ground did not start");
    const goBinary = (await $`bash ${join(import.meta.dir, "../../bench/build-go-attacher.sh")}`.quiet().text()).trim();
    const goImage = "localhost/node-ground/csi-attacher-go:v4.13.0";
    const archive = join(cluster.dir, "node", "csi-attacher-go.tar");
    packStaticImage({ binary: goBinary, name: goImage, user: `${nonroot}:${nonroot}`, file: archive });
    node.containerd.importImage(archive);
    const deployment = await admin.get<DeploymentJson>(deploymentPath());
    const attacher = deployment.spec.template.spec.containers.find((container) => container.name === attacherContainerName);
    if (attacher === undefined) throw new Error("the Deployment has no attacher container");
    attacher.image = goImage;
    attacher.imagePullPolicy = "Never";
    // The Go sidecar serves no /readyz: its readiness is the leader-election check.
    attacher.readinessProbe = { httpGet: { path: "/healthz/leader-election", port: "http-endpoint" }, periodSeconds: 10 };
    // A merge patch of the template, not a PUT of what was read: the deployment controller is still writing the
    // Deployment's status after the rollout before, and a PUT over the copy read gets 409 Conflict (a CI run did).
    await admin.patch(deploymentPath(), { spec: { template: deployment.spec.template } });
    await admin.waitFor<DeploymentJson>(deploymentPath(), (found) => found?.status?.updatedReplicas === 2 && found.status.readyReplicas === 2 && found.status.replicas === 2, 180_000);
    await waitForCondition(
      async () => {
        const holder = (await admin.get<LeaseJson>(leasePath())).spec?.holderIdentity ?? "";
        return (await attacherPods()).some((pod) => pod.metadata?.name === holder && attacherStatus(pod).image === goImage);
      },
      { description: "a Go replica to hold the Lease", timeoutMs: 60_000, intervalMs: 500 },
    );
    const { takeoverMs, attachedMs, leaseMs } = await deleteLeaderThenAttach("app-3", "3");
    console.log(`Go sidecar: leader pod deleted to another replica holding the Lease ${Math.round(takeoverMs)} ms, to the next Pod's volume attached ${Math.round(attachedMs)} ms (lease duration ${leaseMs} ms)`);
    expect((await admin.get<VolumeAttachmentJson>(volumeAttachmentPath("3"))).status?.attached).toBe(true);
  });

  it(`attaches and detaches ${edgeVolumeCount} Pods' volumes at once with the attacher's limits.memory at README's figure for ${edgeVolumeCount} VAs: no container OOMKilled, no attacher restart`, async () => {
    if (node === undefined || nodePlugin === undefined) throw new Error("the node ground or the driver's node side did not start");
    const limit = recommendedMemoryLimit(edgeVolumeCount);
    // deployment.yaml as written again (our image, not the Go one of the test above), the attacher's limit set as README's table says.
    const wanted = mockDriverDeployment(driverName);
    const attacher = wanted.spec.template.spec.containers.find((container) => container.name === attacherContainerName);
    const address = attacher?.env?.find((variable) => variable.name === "ADDRESS")?.value;
    if (attacher?.resources?.limits === undefined || address === undefined) throw new Error("deployment.yaml's attacher has no resources.limits or no ADDRESS");
    attacher.resources.limits["memory"] = limit.quantity;
    // No process of ours runs now (the replicas run the Go sidecar): with the page cache dropped, our replicas read the
    // binary again and their containers are charged for its pages, as on a node that has not run it yet (or whose cache
    // let it go), and as the bench's container-limit scenario measured the table's figures.
    dropPageCache();
    const rolloutStarted = performance.now();
    // A merge patch (the containers list is replaced whole), as above: the controller still writes the status of the Go rollout.
    await admin.patch(deploymentPath(), { spec: { template: wanted.spec.template } });
    const leaderOf = async (pods: readonly PodJson[]) => {
      const holder = (await admin.get<LeaseJson>(leasePath())).spec?.holderIdentity;
      return pods.find((pod) => pod.metadata?.name === holder);
    };
    await waitForCondition(
      async () => {
        const pods = await attacherPods();
        const ours = pods.every((pod) => attacherStatus(pod).image === qualifiedImage && pod.status?.containerStatuses?.every((container) => container.ready) === true);
        return pods.length === 2 && ours && (await leaderOf(pods)) !== undefined;
      },
      { description: "two Ready replicas of ours, one of them holding the Lease", timeoutMs: 180_000, intervalMs: 500 },
    );
    const replicas = await attacherPods();
    const leader = await leaderOf(replicas);
    if (leader === undefined) throw new Error("the Lease holder changed as the rollout ended");
    const replicaPids = replicas.map((pod) => node?.containerd.taskPid(attacherStatus(pod).containerID ?? "") ?? 0);
    const cgroups = replicaPids.map((pid) => memoryCgroupDir(pid));
    expect(cgroups.map((dir) => Number(readFileSync(join(dir, "memory.limit_in_bytes"), "utf8")))).toEqual([limit.bytes, limit.bytes]);
    console.log(`${limit.quantity}: Go replicas replaced by ours in ${Math.round(performance.now() - rolloutStarted)} ms`);

    // The volumes, made as a provisioner makes them, in the driver of each replica and in its node side.
    const names = Array.from({ length: edgeVolumeCount }, (_, i) => `edge-${String(i + 1).padStart(2, "0")}`);
    const leaderSocket = driverSocket(leader, address);
    const volumeIds = await createSharedVolumes([nodePlugin.socket, ...replicas.map((pod) => driverSocket(pod, address))], names);
    const attachments = new Set(volumeIds.map((volumeId) => attachmentName(volumeId, driverName, node?.nodeName ?? "")));
    const ownAttachments = async () => (await admin.list<VolumeAttachmentJson>("/apis/storage.k8s.io/v1/volumeattachments")).items.filter((va) => attachments.has(va.metadata?.name ?? ""));
    const ownPods = async () => (await admin.list<PodJson>(podPaths.pods(namespace))).items.filter((pod) => names.includes(pod.metadata?.name ?? ""));
    let oomKilled: string[] = [];

    const memory = sampleAttacherMemory(leader.status?.podIP ?? "");
    const started = performance.now();
    await Promise.all(names.map((name, i) => createClaimedPod(name, volumeIds[i] ?? "")));
    await waitForCondition(
      async () => {
        const pods = await ownPods();
        oomKilled = [...new Set([...oomKilled, ...oomKilledContainers([...pods, ...(await attacherPods())])])];
        return pods.filter((pod) => pod.status?.phase === "Running").length === edgeVolumeCount && (await ownAttachments()).filter((va) => va.status?.attached === true).length === edgeVolumeCount;
      },
      { description: `${edgeVolumeCount} Pods Running with their volumes attached`, timeoutMs: 300_000, intervalMs: 1000 },
    );
    const runningMs = performance.now() - started;
    const publishedWhileRunning = await publishedVolumes(leaderSocket, nodePlugin.nodeId);

    await Promise.all(names.map((name) => admin.delete(podPaths.pod(namespace, name))));
    await waitForCondition(async () => (await ownAttachments()).length === 0 && (await ownPods()).length === 0, {
      description: `the ${edgeVolumeCount} Pods and their VolumeAttachments gone`,
      timeoutMs: 300_000,
      intervalMs: 1000,
    });
    const goneMs = performance.now() - started;
    const peaks = memory.stop();
    const cgroupFigure = (dir: string, file: string) => Number(readFileSync(join(dir, file), "utf8"));
    const containerPeaks = replicas.map(
      (pod, i) =>
        `${pod === leader ? "the leader's" : "the standby's"} ${(cgroupFigure(cgroups[i] ?? "", "memory.max_usage_in_bytes") / 2 ** 20).toFixed(1)} MiB (${cgroupFigure(cgroups[i] ?? "", "memory.failcnt")} charges refused at the limit)`,
    );
    console.log(
      `${limit.quantity}, ${edgeVolumeCount} Pods created at once: all Running with their volumes attached in ${Math.round(runningMs)} ms, all deleted and every VA gone ${Math.round(goneMs - runningMs)} ms later; ` +
        `the leader's peak resident ${(peaks.residentBytes / 2 ** 20).toFixed(1)} MiB (anonymous ${(peaks.anonymousBytes / 2 ** 20).toFixed(1)} MiB); ` +
        `the containers' peaks since they started, the binary's pages each read first included: ${containerPeaks.join(", ")}`,
    );

    // Every volume published while its Pod ran, and unpublished once when it went.
    const logs = await attacherLogs();
    const count = (line: string) => logs.split(line).length - 1;
    expect({ publishedWhileRunning: publishedWhileRunning.filter((id) => volumeIds.includes(id)).sort(), publishedNow: (await publishedVolumes(leaderSocket, nodePlugin.nodeId)).filter((id) => volumeIds.includes(id)) }).toEqual({
      publishedWhileRunning: [...volumeIds].sort(),
      publishedNow: [],
    });
    expect([...attachments].map((va) => [count(`"Attached" va="${va}"`), count(`"Detached" va="${va}"`)])).toEqual([...attachments].map(() => [1, 1]));
    // No container killed at its limit, and the replicas that did the work are the ones that started, never restarted.
    const after = await attacherPods();
    oomKilled = [...new Set([...oomKilled, ...oomKilledContainers([...after, ...(await admin.list<PodJson>(podPaths.pods(namespace))).items])])];
    expect({
      oomKilled,
      oomKillsInCgroups: cgroups.map((dir) => /^oom_kill (\d+)$/m.exec(readFileSync(join(dir, "memory.oom_control"), "utf8"))?.[1]),
      replicas: after.map((pod) => [pod.metadata?.name, ...(pod.status?.containerStatuses ?? []).map((container) => [container.name, container.restartCount, container.lastState?.terminated?.reason ?? "none"])]),
    }).toEqual({
      oomKilled: [],
      oomKillsInCgroups: ["0", "0"],
      replicas: replicas.map((pod) => [
        pod.metadata?.name,
        [attacherContainerName, 0, "none"],
        ["csi-driver", 0, "none"],
      ]),
    });
  });
});
