/**
 * kube-controller-manager in the test ground, running only the controllers
 * that drive an attacher the way a real cluster does: the attach/detach
 * controller (it creates and deletes VolumeAttachments for Pods' volumes and
 * writes `node.status.volumesAttached`) and the PV binder (it binds the
 * PVCs those Pods name; the attach/detach controller skips unbound ones).
 *
 * There is no kubelet: Nodes are plain API objects the tests create, with
 * the annotation that hands their volumes to the controller.
 */
import { readFileSync } from "node:fs";
import { spawnManaged, waitForCondition, type ManagedProcess } from "./managed-process";

/** The controllers the ground runs, by their v1.36 names. */
export const groundControllers = ["persistentvolume-attach-detach-controller", "persistentvolume-binder-controller"] as const;

/** Options of {@link startKubeControllerManager}. */
export interface KubeControllerManagerOptions {
  /** Path of the built binary, `ComponentPaths.kubeControllerManager`. */
  readonly binary: string;
  /** kubeconfig it talks to the apiserver with; the ground's admin one (system:masters) needs no RBAC. */
  readonly kubeconfig: string;
  /** Directory for `kube-controller-manager.{stdout,stderr}.log`. */
  readonly logDir: string;
  /**
   * Client-side limits towards the apiserver; default upstream's 20/30. The
   * benchmark raises them so that the attacher, not the controller's
   * throttle, sets the pace.
   */
  readonly kubeApiQps?: number;
  /** See {@link kubeApiQps}; default 30. */
  readonly kubeApiBurst?: number;
  /** Deadline in ms for the controllers to have synced their caches; default 60000. */
  readonly startTimeoutMs?: number;
  /** The controllers to run; default {@link groundControllers}. A node runs {@link nodeControllers}. */
  readonly controllers?: readonly string[];
  /** The CA bundle root-ca-certificate-publisher puts in every namespace's kube-root-ca.crt (pods' ca.crt). */
  readonly rootCaFile?: string;
}

/**
 * What pods on a real node need beyond the attach/detach and binder
 * controllers (issue 27, checked 2026-11-26): a `default` service account in
 * each namespace, the `kube-root-ca.crt` ConfigMap their token volume
 * projects, Deployments and their ReplicaSets, and node-lifecycle, which
 * lifts the not-ready taint once the kubelet reports the Node Ready.
 */
export const nodeControllers = [
  ...groundControllers,
  "serviceaccount-controller",
  "root-ca-certificate-publisher-controller",
  "deployment-controller",
  "replicaset-controller",
  "node-lifecycle-controller",
] as const;

/**
 * kubeControllerManagerArgs are the flags of the ground's controller
 * manager: only the two controllers, no leader election (one instance), the
 * kubeconfig's own credentials for every controller (no service-account
 * token controller runs to mint per-controller ones), and no listener at all
 * (secure port 0), so nothing but loopback traffic to the apiserver exists.
 */
export function kubeControllerManagerArgs(options: KubeControllerManagerOptions): string[] {
  return [
    `--kubeconfig=${options.kubeconfig}`,
    `--controllers=${(options.controllers ?? groundControllers).join(",")}`,
    ...(options.rootCaFile === undefined ? [] : [`--root-ca-file=${options.rootCaFile}`]),
    "--use-service-account-credentials=false",
    "--leader-elect=false",
    "--secure-port=0",
    "--profiling=false",
    `--kube-api-qps=${options.kubeApiQps ?? 20}`,
    `--kube-api-burst=${options.kubeApiBurst ?? 30}`,
    // 2 logs each attach and detach operation, which is what explains a failed test.
    "-v=2",
  ];
}

/**
 * Each controller logs this line once its informers have synced. In v1.36
 * it names no controller, so readiness is one line per controller run:
 * before the attach/detach controller's, a Pod may be overlooked until the
 * next full re-scan.
 */
const cachesSyncedLine = /"Caches are synced"/g;

/** controllersSynced counts the controllers whose caches a controller manager's log says have synced. */
export function controllersSynced(log: string): number {
  return log.match(cachesSyncedLine)?.length ?? 0;
}

/**
 * KubeControllerManager is the running process. Its log is the place to
 * look when a VolumeAttachment the test waits for never appears.
 */
export class KubeControllerManager implements AsyncDisposable {
  constructor(readonly process: ManagedProcess) {}

  /** log returns what it wrote to stderr so far (klog writes there). */
  log(): string {
    return readFileSync(this.process.stderrPath, "utf8");
  }

  stop(): Promise<void> {
    return this.process.stop();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}

/**
 * startKubeControllerManager starts it and resolves once both controllers'
 * caches have synced. Create the Nodes first: a Pod the
 * controller sees before its Node waits for the controller's next re-scan
 * of all Pods (3 minutes).
 */
export async function startKubeControllerManager(options: KubeControllerManagerOptions): Promise<KubeControllerManager> {
  const process = spawnManaged({ name: "kube-controller-manager", logDir: options.logDir, command: [options.binary, ...kubeControllerManagerArgs(options)] });
  const manager = new KubeControllerManager(process);
  try {
    await waitForCondition(() => controllersSynced(manager.log()) >= groundControllers.length, {
      // The attach/detach and binder controllers are the ones a late sync would make tests miss work of.
      description: "kube-controller-manager's controllers to sync their caches",
      timeoutMs: options.startTimeoutMs ?? 60_000,
      intervalMs: 100,
      watch: [process],
    });
  } catch (e: unknown) {
    await process.stop();
    throw e;
  }
  return manager;
}
