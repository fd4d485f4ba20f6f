import { $ } from "bun";
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { leaderElectionLeaseName } from "../../src/leader/lease-name";
import { AdminClient, type KubeObject } from "../cluster/admin-client";
import { ensureComponents, type ComponentPaths } from "../cluster/components";
import { errorMessage, waitForCondition } from "../cluster/managed-process";
import { fixedHostPaths } from "../cluster/node/host-paths";
import { startNodePlugin } from "../cluster/node/node-plugin";
import { nodeClusterOptions, nodeImages, startNodeGround, type NodeGround } from "../cluster/node/node-ground";
import { mockDriverDeployment, type DeploymentJson } from "../cluster/node/mock-driver-deployment";
import { nodeGroundProblem } from "../cluster/node/node-prerequisites";
import { packStaticImage } from "../cluster/node/static-image";
import { startTestCluster, type TestCluster } from "../cluster/test-cluster";
import { applyObjects } from "./support/apply-manifest";
import { attacherContainerName } from "./support/deployment-manifest";
import { persistentVolume } from "./support/objects";
import { attachmentName, attachRequiredCsiDriver, claimFor, claimingPod, podPaths } from "./support/pod-objects";
import { readRbacManifest } from "./support/rbac-manifest";

/**
 * deploy/kubernetes/rbac.yaml and deployment.yaml on a real node: a kubelet
 * and containerd (the node ground, test/cluster/node) read the manifests,
 * mount the service-account token, run the probes and enforce the security
 * context and the memory limit (issue 27). The one change to the manifests
 * is the placeholder csi-driver container, which becomes Kubernetes' mock
 * CSI driver, packed into an image here.
 *
 * The node ground takes host paths the kubelet and containerd fix, so one
 * node runs per machine: this is the only test file that starts one, and a
 * second start (a person's `bun run start --with-node` at the same time)
 * fails naming the paths in use.
 */
const driverName = "node-ground.csi.test";
const imageArchive = join(import.meta.dir, "../../dist/csi-attacher-image.tar");
/** The name the Deployment's `bun-csi-attacher:latest` resolves to, which index.json's io.containerd.image.name gives the import. */
const qualifiedImage = "docker.io/library/bun-csi-attacher:latest";
const memoryLimitBytes = 128 * 1024 * 1024;
const nonroot = 65532;

let components: ComponentPaths;
let cluster: TestCluster | undefined;
let node: NodeGround | undefined;
let admin: AdminClient;
let namespace: string;
let readyAt = 0;
/** The driver's node side, once the volume test started it. */
let nodePlugin: { stop(): Promise<void> } | undefined;

interface PodJson extends KubeObject {
  status?: {
    phase?: string;
    podIP?: string;
    containerStatuses?: { name: string; ready: boolean; restartCount: number; containerID?: string; image: string }[];
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

function attacherStatus(pod: PodJson) {
  const status = pod.status?.containerStatuses?.find((container) => container.name === attacherContainerName);
  if (status === undefined) throw new Error(`pod ${pod.metadata?.name} has no ${attacherContainerName} status`);
  return status;
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

/** createClaimedPod creates a PV for one of the mock driver's volumes ("1" to "3", in both its processes), a claim bound to it, and a Pod using it. */
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
  await nodePlugin?.stop();
  await node?.stop();
  await cluster?.stop();
});

describe("the Deployment as written, on a kubelet and containerd", () => {
  it("imports dist/csi-attacher-image.tar with `ctr -n k8s.io images import` under the name the Deployment's image resolves to", () => {
    if (node === undefined) throw new Error("the node ground did not start");
    node.containerd.importImage(imageArchive);
    expect(node.containerd.imageNames()).toContain(qualifiedImage);
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
      const memoryCgroup = readFileSync(`/proc/${pid}/cgroup`, "utf8")
        .split("\n")
        .map((line) => line.split(":"))
        .find((fields) => fields[1]?.split(",").includes("memory"))?.[2];
      const limit = Number(readFileSync(join("/sys/fs/cgroup/memory", memoryCgroup ?? "/nowhere", "memory.limit_in_bytes"), "utf8"));
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
    nodePlugin = plugin.process;
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
    await admin.replace(deploymentPath(), deployment);
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
});
