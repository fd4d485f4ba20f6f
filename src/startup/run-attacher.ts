import { hostname } from "node:os";
import type { Config } from "../cli/config";
import { AttachController, vaWorkKind } from "../controller/attach-controller";
import { AttacherApi } from "../controller/attacher-api";
import { CsiHandler } from "../controller/csi-handler";
import { ForcedSyncs } from "../controller/forced-syncs";
import { InheritedPublications } from "../controller/inherited-publications";
import type { Handler } from "../controller/handler";
import { PersistentVolumeFinalizerWriter } from "../controller/pv-finalizer-writer";
import { Reconciler } from "../controller/reconciler";
import { TrivialHandler } from "../controller/trivial-handler";
import { VolumeAttachmentWriter } from "../controller/va-writer";
import { VanishedVolumeAttachments } from "../controller/vanished-volume-attachments";
import { workQueueNames } from "../controller/work-queue-names";
import { EventRecorder } from "../kube/event-recorder";
import type { KubeClient } from "../kube/http-client";
import type { Logger } from "../log/logger";
import { attachDetachLanes } from "../queue/attach-detach-lanes";
import { BacklogWarning } from "../queue/backlog-warning";
import { ItemExponentialFailureRateLimiter } from "../queue/rate-limiter";
import { WorkQueue, type WorkQueueLanes } from "../queue/work-queue";
import type { ApiServer } from "./api-server";
import { createClusterCaches, type ClusterCaches } from "./cluster-caches";
import type { CsiDriver, DriverInfo } from "./csi-driver";
import type { HttpEndpoint } from "./http-endpoint";

export interface RunAttacherOptions {
  /** --timeout, --default-fstype, --worker-threads, the retry intervals, --reconcile-sync, --max-entries and --resync. */
  readonly config: Pick<
    Config,
    "timeoutMs" | "defaultFsType" | "workerThreads" | "retryIntervalStartMs" | "retryIntervalMaxMs" | "reconcileSyncMs" | "maxEntries" | "resyncMs"
  >;
  /** The process logger, handed to every part of the attacher. */
  readonly log: Logger;
  /** The work path's client. */
  readonly apiServer: Pick<ApiServer, "client">;
  /** The driver, started: its client, name and capabilities. */
  readonly driver: CsiDriver;
  /** Told when the caches have synced; its metrics, if kept, watch the queues. */
  readonly endpoint: Pick<HttpEndpoint, "readiness" | "metrics">;
  /** Aborted on shutdown, or, under leader election, when the lease is lost. */
  readonly signal: AbortSignal;
}

/**
 * runAttacher is the attacher at work: it fills the caches, and once they
 * are synced runs the controller's workers, the periodic resync and the
 * reconciler until `signal` aborts and everything has drained.
 */
export async function runAttacher(options: RunAttacherOptions): Promise<void> {
  const { config, log, signal, driver, endpoint } = options;
  const { client } = options.apiServer;
  const driverName = driver.info.name;
  const caches = createClusterCaches({ client, log, driverName, signal });
  const { vas, pvs, csiNodes } = caches;

  const { capabilities } = driver.info;
  log.v(2).info("CSI driver capabilities", { driver: driverName, ...capabilities });
  // Shared with the reconciler, which marks VAs whose status disagrees with the driver.
  const forcedSyncs = new ForcedSyncs();
  // Shared with the reconciler too: what this leader must check about publishes it did not see end.
  const inherited = new InheritedPublications();
  const { handler, vanished } = chooseHandler({ config, log, client, driver, caches, forcedSyncs, inherited, signal });

  const { vaQueue, pvQueue } = createWorkQueues({ config, vas, metrics: endpoint.metrics });
  const controller = new AttachController({ driverName, handler, vas, pvs, vaQueue, pvQueue, log, ...(vanished ? { vanished } : {}) });
  new BacklogWarning({ queues: [vaQueue, pvQueue], log }).run(signal);

  // As upstream: only a driver that can publish and list where its volumes
  // are published is reconciled (the trivial handler has nothing to redo).
  let reconciler: Reconciler | undefined;
  if (handler instanceof CsiHandler && listsPublishedNodes(capabilities)) {
    log.v(2).info("CSI driver supports list volumes published nodes. Using capability to reconcile volume attachment objects with actual backend state", { driver: driverName });
    reconciler = new Reconciler({
      driverName,
      lister: driver.csi,
      vas,
      pvs,
      csiNodes,
      forcedSyncs,
      vaQueue,
      inherited,
      pvQueue,
      periodMs: config.reconcileSyncMs,
      maxEntries: config.maxEntries,
      timeoutMs: config.timeoutMs,
      log,
    });
  }

  await runOnSyncedCaches({ config, log, caches, readiness: endpoint.readiness, controller, reconciler, signal });
}

interface WorkQueuesOptions {
  /** --retry-interval-start and --retry-interval-max (each item's back-off), --worker-threads (the attach and detach lanes). */
  readonly config: Pick<Config, "retryIntervalStartMs" | "retryIntervalMaxMs" | "workerThreads">;
  /** The VA cache, which tells an attach from a detach for the lanes. */
  readonly vas: ClusterCaches["vas"];
  /** The process metrics, if kept: each queue reports its own and is watched. */
  readonly metrics: HttpEndpoint["metrics"];
}

/** createWorkQueues builds the VA queue, its attach and detach lanes sharing the workers, and the PV queue. */
function createWorkQueues(options: WorkQueuesOptions): { vaQueue: WorkQueue<string>; pvQueue: WorkQueue<string> } {
  const { config, metrics } = options;
  const newQueue = (name: string, lanes?: WorkQueueLanes<string>) => {
    const queue = new WorkQueue<string>({
      name,
      ...(lanes === undefined ? {} : { lanes }),
      rateLimiter: new ItemExponentialFailureRateLimiter<string>({ baseDelayMs: config.retryIntervalStartMs, maxDelayMs: config.retryIntervalMaxMs }),
      ...(metrics === undefined ? {} : { metrics: metrics.workQueueMetrics(name) }),
    });
    metrics?.watchQueue(queue);
    return queue;
  };
  const vaQueue = newQueue(workQueueNames.volumeAttachments, attachDetachLanes(vaWorkKind(options.vas), config.workerThreads));
  const pvQueue = newQueue(workQueueNames.persistentVolumes);
  return { vaQueue, pvQueue };
}

interface SyncedRunOptions {
  /** --resync (0 turns the periodic resync off) and --worker-threads. */
  readonly config: Pick<Config, "resyncMs" | "workerThreads">;
  /** Says when the caches have synced and what they hold. */
  readonly log: Logger;
  /** The caches and their reflectors, not yet running. */
  readonly caches: ClusterCaches;
  /** Told when the caches have synced. */
  readonly readiness: HttpEndpoint["readiness"];
  /** Its workers start once the caches have synced. */
  readonly controller: AttachController;
  /** Present when the driver lists where its volumes are published. */
  readonly reconciler: Reconciler | undefined;
  /** Stops everything. */
  readonly signal: AbortSignal;
}

/**
 * runOnSyncedCaches runs the reflectors, and once their first lists are in
 * the caches the workers and the reconciler, until `signal` aborts.
 */
async function runOnSyncedCaches(options: SyncedRunOptions): Promise<void> {
  const { config, log, controller, reconciler, signal } = options;
  const { vas, pvs, csiNodes, reflectors } = options.caches;
  const watching = reflectors.map((reflector) => reflector.run(signal));
  // No worker may act on a half-filled cache: a PV or CSINode not yet listed
  // would look deleted.
  await Promise.race([Promise.all(reflectors.map((reflector) => reflector.waitForSync())), aborted(signal)]);
  if (signal.aborted) return;
  options.readiness.satisfy("caches-synced");
  log.info("Caches synced", { volumeAttachments: vas.size, persistentVolumes: pvs.size, csiNodes: csiNodes.size });

  // --resync=0 turns the periodic resync off, as it does for client-go's informers.
  const resync =
    config.resyncMs > 0
      ? setInterval(() => {
          vas.resync();
          pvs.resync();
        }, config.resyncMs)
      : undefined;
  // Started only now: compared with half-filled caches, VAs would be skipped.
  const reconciling = reconciler?.run(signal);
  try {
    await controller.run(config.workerThreads, signal);
  } finally {
    clearInterval(resync);
  }
  await reconciling;
  await Promise.all(watching);
}

interface HandlerChoiceOptions {
  /** --timeout (each CSI call's deadline) and --default-fstype. */
  readonly config: Pick<Config, "timeoutMs" | "defaultFsType">;
  /** The process logger, handed to the handler. */
  readonly log: Logger;
  /** The work path's client, which writes VAs, PVs and Events. */
  readonly client: KubeClient;
  /** The started driver: its capabilities decide the handler, its client makes the calls. */
  readonly driver: CsiDriver;
  /** The caches the handler reads VAs, PVs and CSINodes from. */
  readonly caches: ClusterCaches;
  /** The syncs the reconciler asks the handler for. */
  readonly forcedSyncs: ForcedSyncs;
  /** The publishes this leader did not see end, which the reconciler helps to find. */
  readonly inherited: InheritedPublications;
  /** Stops the event recorder. */
  readonly signal: AbortSignal;
}

/** HandlerChoice is the handler the workers call, and with the CSI handler the VAs it saw vanish mid-operation. */
interface HandlerChoice {
  readonly handler: Handler;
  readonly vanished: VanishedVolumeAttachments | undefined;
}

/**
 * chooseHandler picks what attaching means for this driver, as upstream
 * does: ControllerPublish/Unpublish through the CSI handler when the driver
 * offers them, else the trivial handler, which only marks VAs attached.
 */
function chooseHandler(options: HandlerChoiceOptions): HandlerChoice {
  const { config, log, client, driver, caches, forcedSyncs, inherited } = options;
  const driverName = driver.info.name;
  const { capabilities } = driver.info;
  const { vas, pvs, csiNodes, parse } = caches;
  const api = new AttacherApi(client, { vas, pvs, parse });
  // Attach and detach failures also become Warning events on the VA (beyond upstream).
  const events = new EventRecorder({ client, log, component: "csi-attacher", host: hostname(), signal: options.signal });
  const writer = new VolumeAttachmentWriter({ api, driverName, events });
  if (!(capabilities.controllerService && capabilities.publishUnpublish)) {
    log.v(2).info("CSI driver does not support ControllerPublishUnpublish, using trivial handler", { driver: driverName });
    return { handler: new TrivialHandler(writer, log), vanished: undefined };
  }
  const vanished = new VanishedVolumeAttachments({ driverName, log });
  log.v(2).info("CSI driver supports ControllerPublishUnpublish, using real CSI handler", { driver: driverName });
  const pvWriter = new PersistentVolumeFinalizerWriter({ api, driverName });
  const handler = new CsiHandler({
    driverName,
    log,
    api,
    writer,
    pvWriter,
    csi: driver.csi,
    vas,
    pvs,
    csiNodes,
    forcedSyncs,
    vanished,
    inherited,
    listsPublishedNodes: listsPublishedNodes(capabilities),
    events,
    timeoutMs: config.timeoutMs,
    supportsPublishReadonly: capabilities.publishReadonly,
    supportsSingleNodeMultiWriter: capabilities.singleNodeMultiWriter,
    defaultFsType: config.defaultFsType,
  });
  return { handler, vanished };
}

/** listsPublishedNodes: the driver can say where its volumes are published, so the reconciler runs (as upstream decides). */
function listsPublishedNodes(capabilities: DriverInfo["capabilities"]): boolean {
  return capabilities.listVolumes && capabilities.listVolumesPublishedNodes;
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}
