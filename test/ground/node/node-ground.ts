/**
 * The node ground: the test cluster made a node. Beside etcd and
 * kube-apiserver it runs containerd (Debian's 1.6), a kubelet and
 * kube-scheduler built from the kubernetes module, kube-controller-manager
 * with the controllers pods need, and a bridge pod network, so that
 * manifests are applied as on a real cluster and a real kubelet starts
 * their pods. It takes the host paths the kubelet and containerd fix
 * (host-paths.ts): one node ground per machine, which holds the node lock
 * while it runs (node-lock.ts), and stop() removes them.
 *
 * Start the cluster with {@link nodeClusterOptions}, then {@link startNodeGround}.
 */
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { AdminClient, type KubeObject } from "../admin-client";
import type { ComponentPaths } from "../components";
import { freeLoopbackPorts } from "../free-ports";
import { nodeControllers, type KubeControllerManager } from "../kube-controller-manager";
import { errorMessage, onProcessExit, spawnManaged, waitForCondition, type ManagedProcess } from "../managed-process";
import type { TestClusterOptions, TestCluster } from "../test-cluster";
import { startContainerd, type Containerd } from "./containerd";
import { run } from "./host-commands";
import { fixedHostPaths, killOrphanedContainers, removeHostPaths, removeKubepodsCgroups } from "./host-paths";
import { startKubelet } from "./kubelet";
import { NodeLock } from "./node-lock";
import { cniBinDir, nodeGroundProblem } from "./node-prerequisites";
import { ApiServiceRoute, writeCniConfig } from "./pod-network";
import { packStaticImage } from "./static-image";

/** The cluster options a node needs: pods get service-account tokens; logs and exec reach the kubelet by its InternalIP. */
export const nodeClusterOptions = {
  serviceAccountAdmission: true,
  extraApiserverArgs: ["--kubelet-preferred-address-types=InternalIP,Hostname"],
} as const satisfies TestClusterOptions;

/** The images the node holds before any pod: the pause image, and Kubernetes' mock CSI driver as a container. */
export const nodeImages = {
  pause: "localhost/node-ground/pause:1",
  mockCsiDriver: "localhost/node-ground/mock-csi-driver:v1.36.3",
} as const;

interface NodeObject extends KubeObject {
  spec?: { taints?: { key: string; effect: string }[] };
  status?: { conditions?: { type: string; status: string }[] };
}

/** NodeGround is the running node; stop() takes it all down and gives the host paths back. */
export class NodeGround implements AsyncDisposable {
  #stopping: Promise<void> | undefined;
  /** Takes the node down without waiting if this process exits before stop(). */
  readonly #unregisterExitHook: () => void;

  constructor(
    /** The Node's name. */
    readonly nodeName: string,
    readonly containerd: Containerd,
    readonly kubelet: ManagedProcess,
    private readonly scheduler: ManagedProcess,
    private readonly controllerManager: KubeControllerManager,
    private readonly route: ApiServiceRoute,
    private readonly admin: AdminClient,
    /** Where the mock CSI driver's image says its binary is. */
    readonly mockCsiDriverEntrypoint: string,
    private readonly lock: NodeLock,
  ) {
    this.#unregisterExitHook = onProcessExit(() => {
      killOrphanedContainers();
      route.remove();
      removeNodeHostState();
      lock.release();
    });
  }

  /**
   * stop ends the pods first, through the API with the controllers stopped
   * so that nothing recreates them, and lets the kubelet take them down
   * (network, mounts); then the kubelet, what containers remain, containerd,
   * the route, and the host paths and cgroups. Idempotent.
   */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      await this.controllerManager.stop();
      await this.scheduler.stop();
      try {
        const pods = await this.admin.list("/api/v1/pods");
        for (const pod of pods.items) {
          const { namespace, name } = pod.metadata ?? {};
          if (namespace !== undefined && name !== undefined) await this.admin.request("DELETE", `/api/v1/namespaces/${namespace}/pods/${name}`, { gracePeriodSeconds: 0 });
        }
        await waitForCondition(() => this.containerd.runningTasks() === 0, { description: "the kubelet to stop every pod's containers", timeoutMs: 30_000, intervalMs: 200 });
      } catch (e: unknown) {
        process.stderr.write(`node ground: pods did not all stop through the kubelet (${errorMessage(e)}); killing their containers:\n${this.remainingTasks()}\n`);
      }
      await this.kubelet.stop();
      this.containerd.killAllTasks();
      await this.containerd.stop();
      this.route.remove();
      removeNodeHostState();
      this.lock.release();
      this.#unregisterExitHook();
    })();
    return this.#stopping;
  }

  /** The tasks containerd still has, as `ctr tasks ls` lists them: which outlived their pods is what explains a slow stop. */
  private remainingTasks(): string {
    try {
      return this.containerd.ctr(["tasks", "ls"]);
    } catch (e: unknown) {
      return `(ctr tasks ls failed: ${errorMessage(e)})`;
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}

/** removeNodeHostState removes what the node leaves on the host once its processes are gone. */
function removeNodeHostState(): void {
  removePodNetworkNamespaces();
  removeHostPaths();
  removeKubepodsCgroups();
}

/** The network namespaces containerd's CRI makes for pod sandboxes (bind mounts under /run/netns). */
function removePodNetworkNamespaces(): void {
  const dir = "/run/netns";
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.startsWith("cni-"));
  } catch {
    return;
  }
  for (const name of names) {
    run(["umount", "--lazy", join(dir, name)], { allowFailure: true });
    rmSync(join(dir, name), { force: true });
  }
}

export interface NodeGroundOptions {
  /** A cluster started with {@link nodeClusterOptions}. */
  readonly cluster: TestCluster;
  readonly components: ComponentPaths;
  /** The Node's name; default "node-ground". */
  readonly nodeName?: string;
  /** Deadline in ms for the Node to be Ready and schedulable; default 120000. */
  readonly readyTimeoutMs?: number;
}

/**
 * startNodeGround makes `cluster` a node and resolves once its Node is
 * Ready without the not-ready taint. Throws at once, saying what is
 * missing, on a machine that cannot host it (nodeGroundProblem), or
 * naming the process whose ground runs already (node-lock.ts).
 */
export async function startNodeGround(options: NodeGroundOptions): Promise<NodeGround> {
  const { lock, deadHolder } = NodeLock.take();
  try {
    if (deadHolder !== undefined) {
      process.stderr.write(`node ground: process ${deadHolder}, whose ground held the node lock, is gone; removing what its ground left\n`);
      killOrphanedContainers();
      removeNodeHostState();
    }
    const problem = nodeGroundProblem();
    if (problem !== undefined) throw new Error(problem);
    // Without recursion: a containerd of the machine's own that started since the check fails us here, before we touch its state.
    mkdirSync(fixedHostPaths.containerdState);
  } catch (e: unknown) {
    lock.release();
    throw e;
  }
  const { cluster, components } = options;
  const nodeName = options.nodeName ?? "node-ground";
  const dir = join(cluster.dir, "node");
  const admin = new AdminClient(cluster);
  const started: { stop(): void | Promise<void> }[] = [
    {
      stop: () => {
        removeNodeHostState();
        lock.release();
      },
    },
  ];
  try {
    for (const path of Object.values(fixedHostPaths)) mkdirSync(path, { recursive: true });
    process.stderr.write(`node ground: created ${Object.values(fixedHostPaths).join(", ")} (paths the kubelet and containerd fix); stopping the ground removes them\n`);
    mkdirSync(dir, { recursive: true });
    const cniConfDir = writeCniConfig(join(dir, "cni"));
    const containerd = await startContainerd({ dir: join(dir, "containerd"), sandboxImage: nodeImages.pause, cniConfDir, cniBinDir });
    started.unshift(containerd);
    const pauseArchive = join(dir, "pause.tar");
    packStaticImage({ binary: components.pause, name: nodeImages.pause, user: "65535:65535", file: pauseArchive });
    containerd.importImage(pauseArchive);
    const driverArchive = join(dir, "mock-csi-driver.tar");
    const mockCsiDriverEntrypoint = packStaticImage({ binary: components.mockCsiDriver, name: nodeImages.mockCsiDriver, user: "65532:65532", file: driverArchive });
    containerd.importImage(driverArchive);

    const service = await admin.get<KubeObject & { spec?: { clusterIP?: string } }>("/api/v1/namespaces/default/services/kubernetes");
    const route = ApiServiceRoute.add(service.spec?.clusterIP ?? "", Number(new URL(cluster.server).port));
    started.unshift({ stop: () => route.remove() });
    const controllerManager = await cluster.startControllerManager({ controllers: nodeControllers, rootCaFile: join(cluster.dir, "pki", "apiserver.crt") });
    const scheduler = spawnManaged({
      name: "kube-scheduler",
      logDir: dir,
      command: [components.kubeScheduler, `--kubeconfig=${cluster.kubeconfigPath}`, "--leader-elect=false", "--secure-port=0", "-v=2"],
    });
    started.unshift(scheduler);
    const ports = await freeLoopbackPorts(["kubelet", "kubeletHealthz"]);
    const kubelet = startKubelet({ binary: components.kubelet, dir, kubeconfig: cluster.kubeconfigPath, nodeName, port: ports.kubelet, healthzPort: ports.kubeletHealthz });
    started.unshift(kubelet);
    await waitForCondition(
      async () => {
        const node = await admin.get<NodeObject>(`/api/v1/nodes/${nodeName}`);
        const ready = node.status?.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True") === true;
        return ready && !(node.spec?.taints ?? []).some((taint) => taint.key === "node.kubernetes.io/not-ready");
      },
      { description: `Node ${nodeName} Ready and schedulable`, timeoutMs: options.readyTimeoutMs ?? 120_000, intervalMs: 200, watch: [kubelet, containerd.process, scheduler, controllerManager.process] },
    );
    return new NodeGround(nodeName, containerd, kubelet, scheduler, controllerManager, route, admin, mockCsiDriverEntrypoint, lock);
  } catch (e: unknown) {
    for (const part of started) await part.stop();
    throw new Error(`starting the node ground failed (logs in ${dir}): ${errorMessage(e)}`, { cause: e });
  }
}
