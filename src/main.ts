import { hostname } from "node:os";
import { parseConfig, type Config } from "./cli/config";
import { FlagError } from "./cli/errors";
import { usage } from "./cli/usage";
import { gitCommit, platform, version, versionLine } from "./cli/version";
import { AttachController, vaWorkKind } from "./controller/attach-controller";
import { CsiHandler } from "./controller/csi-handler";
import { ForcedSyncs } from "./controller/forced-syncs";
import type { Handler } from "./controller/handler";
import { inTreePluginForDriver } from "./controller/migration/in-tree-plugins";
import { Reconciler } from "./controller/reconciler";
import { cachedObjectParsers } from "./controller/cached-objects";
import { TrivialHandler } from "./controller/trivial-handler";
import { PersistentVolumeFinalizerWriter } from "./controller/pv-finalizer-writer";
import { VanishedVolumeAttachments } from "./controller/vanished-volume-attachments";
import { VolumeAttachmentWriter } from "./controller/va-writer";
import { CsiClient } from "./csi/csi-client";
import { DriverLoss, stopSignalSpreadMs } from "./csi/driver-loss";
import { startDriver, type DriverInfo } from "./csi/driver-startup";
import { createGrpcLogInterceptor, grpcLogLevel } from "./csi/grpc-log-interceptor";
import { createOperationMetricsInterceptor } from "./csi/operation-metrics-interceptor";
import { createDriverTransport } from "./csi/transport";
import { runDoctor } from "./doctor/run-doctor";
import { LeaderElectionHealthAdaptor } from "./http/leader-election-health";
import type { MetricRegistry } from "./metrics/metric-registry";
import { Readiness } from "./http/readiness";
import { AttacherApi } from "./controller/attacher-api";
import { EventRecorder } from "./kube/event-recorder";
import { KubeClient } from "./kube/http-client";
import { loadKubeConnection, type KubeConnection } from "./kube/kubeconfig";
import { csiNodesPath, type CsiNode } from "./kube/objects/csi-node";
import type { KubeObject } from "./kube/objects/object-meta";
import { persistentVolumesPath, type PersistentVolume } from "./kube/objects/persistent-volume";
import { volumeAttachmentsPath, type VolumeAttachment } from "./kube/objects/volume-attachment";
import { Reflector } from "./kube/reflector";
import { Store } from "./kube/store";
import { createApiThrottle } from "./kube/token-bucket";
import { createAttacherLeaderElector } from "./leader/create-leader-elector";
import { Logger } from "./log/logger";
import { attachDetachLanes } from "./queue/attach-detach-lanes";
import { BacklogWarning } from "./queue/backlog-warning";
import { ItemExponentialFailureRateLimiter } from "./queue/rate-limiter";
import { WorkQueue, type WorkQueueLanes } from "./queue/work-queue";
import { memoryLimitFields, readOwnMemoryLimit } from "./util/cgroup-memory-limit";
import { IdleCollector } from "./util/idle-collector";
import { terminationLogPath, writeTerminationMessage } from "./util/termination-message";

/**
 * The attacher's entry point: wiring only, and the one place that decides
 * the process's exit code.
 */
async function main(argv: readonly string[]): Promise<number> {
  // A subcommand of its own, with its own flags: the doctor only reads.
  if (argv[0] === "doctor") return runDoctor(argv.slice(1), { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) });
  let config: Config;
  try {
    config = parseConfig(argv);
  } catch (e: unknown) {
    if (e instanceof FlagError) {
      process.stderr.write(`${e.message}\n`);
      return e.exitCode;
    }
    throw e;
  }
  if (config.showHelp) {
    process.stdout.write(`${usage()}\n`);
    return 0;
  }
  if (config.showVersion) {
    process.stdout.write(`${versionLine()}\n`);
    return 0;
  }

  const log = new Logger({ verbosity: config.verbosity, format: config.loggingFormat, vmodule: config.vmodule });
  log.info("Version", { version, commit: gitCommit, platform });
  // Only read when it is logged: the walk over the cgroup files is start-up work nothing else needs.
  const memoryLog = log.v(2);
  if (memoryLog.enabled) memoryLog.info("Memory limit", memoryLimitFields(readOwnMemoryLimit(), process.execArgv));
  // `stop` ends the work (a signal, or the driver lost); `signalled` only a stop signal.
  const stop = new AbortController();
  const signalled = new AbortController();
  // In-flight CSI calls end within --timeout; the API writes that record
  // their outcome follow at once. Past that, something is stuck.
  const drainMs = config.timeoutMs + shutdownGraceMs;
  const stopWork = () => {
    if (stop.signal.aborted) return;
    stop.abort();
    setTimeout(() => {
      log.error("In-flight operations did not finish in time, exiting", { drainTimeout: `${drainMs}ms` });
      process.exit(1);
    }, drainMs).unref();
  };
  // Handlers stay here: Bun as PID 1 ignores SIGTERM unless JS handles it.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      if (signalled.signal.aborted) {
        // As Kubernetes components do: a second signal means "now".
        log.warn("Received second signal, exiting without waiting for in-flight operations", { signal });
        process.exit(1);
      }
      log.info("Received signal, shutting down", { signal, drainTimeout: `${drainMs}ms` });
      signalled.abort();
      stopWork();
    });
  }
  const driverLoss = new DriverLoss({ stopping: signalled.signal, stopWork });

  // One bucket for every request of the work path, watches included (client-go
  // throttles a watch's opening request too). Leader election has its own
  // client. The flag schemas have already refused values it cannot take.
  const throttle = createApiThrottle(config.kubeApiQps, config.kubeApiBurst);

  // The endpoint is up from the start, so /healthz answers and /readyz says
  // what start-up still waits for. Without --http-endpoint nothing listens
  // and no metric is kept.
  // With leader election a standby never lists (only the leader runs the
  // controller), and a Deployment's rollout waits for every replica to be
  // ready: there, ready means able to take over, the driver answered Probe.
  const readiness = new Readiness(config.leaderElection ? ["driver-probed"] : ["driver-probed", "caches-synced"]);
  // The elector, once built, is handed to this (and to metrics.watchLeaderElection).
  const leaderHealth = new LeaderElectionHealthAdaptor();
  let metrics: MetricRegistry | undefined;
  if (config.httpEndpoint !== "") {
    // prom-client and the server load only when something listens: the
    // build's --splitting puts them in a chunk of their own. Only modules
    // that nothing else imports are worth importing lazily; the doctor's own
    // modules, beyond the kube and CSI clients it shares, weigh next to
    // nothing at start (issue 13).
    const [{ MetricRegistry }, { startHttpServer }] = await Promise.all([import("./metrics/metric-registry"), import("./http/http-server")]);
    metrics = new MetricRegistry();
    try {
      // Closed by the process exit, like Go's ListenAndServe goroutine.
      startHttpServer({
        address: config.httpEndpoint,
        metricsPath: config.metricsPath,
        metrics,
        readiness,
        log,
        ...(config.leaderElection ? { leaderElection: leaderHealth } : {}),
      });
    } catch (e: unknown) {
      log.error("Failed to start HTTP server at specified address and metrics path", { err: e, address: config.httpEndpoint, metricsPath: config.metricsPath });
      return 1;
    }
  }

  const userAgent = `csi-attacher/${version}`;
  let connection: KubeConnection;
  let kubeClient: KubeClient;
  try {
    connection = await loadKubeConnection({ kubeconfig: config.kubeconfig });
    kubeClient = new KubeClient({ connection, userAgent, ...(throttle ? { throttle } : {}) });
  } catch (e: unknown) {
    log.error("Failed to build a Kubernetes config", { err: e });
    return 1;
  }

  const transport = createDriverTransport({
    socketPath: config.csiAddress,
    // Logging outermost and metrics inside it, as csi-lib-utils chains them, so
    // a call's recorded time leaves out the logging of its payloads.
    interceptors: [
      // Left out altogether unless -v=5, or a --vmodule rule at 5 or more, can print its lines.
      ...(config.verbosity >= grpcLogLevel || config.vmodule.some((rule) => rule.verbosity >= grpcLogLevel) ? [createGrpcLogInterceptor({ log, maxLogLength: config.maxGrpcLogLength })] : []),
      ...(metrics === undefined ? [] : [createOperationMetricsInterceptor({ observer: metrics.csiOperations })]),
    ],
    onConnectionLost: (reason) => {
      if (!signalled.signal.aborted) log.info("CSI driver connection lost, waiting for a stop signal that may come with it", { spread: `${stopSignalSpreadMs}ms` });
      // The work stops at once (a leader gives its Lease back); the wait only names the exit.
      void driverLoss.note()?.then((meaning) => {
        if (meaning === "shutting-down") {
          // The pod is being deleted and its driver stopped too (often first): the drain goes on.
          log.info("CSI driver went away while shutting down", { address: config.csiAddress, reason });
          return;
        }
        // Upstream exits so that Kubernetes restarts the pod and it reconnects cleanly.
        const message = "Lost connection to CSI driver, exiting";
        log.error(message, { address: config.csiAddress, reason });
        const path = terminationLogPath();
        const notWritten = writeTerminationMessage(path, message);
        if (notWritten !== undefined) log.v(4).info("No termination message written", { path, reason: notWritten });
      });
    },
  });
  const csi = new CsiClient(transport);
  let driver: DriverInfo;
  try {
    driver = await startDriver({ client: csi, socketPath: config.csiAddress, log, probeTimeoutMs: config.timeoutMs, signal: stop.signal });
  } catch (e: unknown) {
    if (stop.signal.aborted) return driverLoss.exitCode();
    log.error("Failed to start with the CSI driver", { err: e, csiAddress: config.csiAddress });
    return 1;
  }

  readiness.satisfy("driver-probed");
  // A driver that in-tree volumes migrate to gets the `migrated` label, as upstream's WithMigration.
  metrics?.csiOperations.setDriver(driver.name, inTreePluginForDriver(driver.name) !== undefined);

  if (!config.leaderElection) {
    await runAttacher(config, driver, csi, kubeClient, log, stop.signal, readiness, metrics);
    log.info("Stopped");
    return driverLoss.exitCode();
  }
  let elector: ReturnType<typeof createAttacherLeaderElector>;
  try {
    elector = createAttacherLeaderElector({
      connection,
      userAgent,
      driverName: driver.name,
      namespace: config.leaderElectionNamespace,
      leaseDurationMs: config.leaderElectionLeaseDurationMs,
      renewDeadlineMs: config.leaderElectionRenewDeadlineMs,
      retryPeriodMs: config.leaderElectionRetryPeriodMs,
      labels: config.leaderElectionLabels,
      releaseOnExit: config.featureGates.ReleaseLeaderElectionOnExit,
      log,
    });
  } catch (e: unknown) {
    log.error("Failed to initialize leader election", { err: e });
    return 1;
  }
  leaderHealth.set(elector);
  metrics?.watchLeaderElection(elector);
  const outcome = await elector.run(stop.signal, (leading) => runAttacher(config, driver, csi, kubeClient, log, leading, readiness, metrics));
  // A lost lease means another replica may already be attaching: stop at once, as upstream does.
  if (outcome === "lost") return 1;
  log.info("Stopped");
  return driverLoss.exitCode();
}

/** Time allowed after --timeout for the last operations' API writes when shutting down. */
const shutdownGraceMs = 5_000;

async function runAttacher(
  config: Config,
  driver: DriverInfo,
  csi: CsiClient,
  client: KubeClient,
  log: Logger,
  signal: AbortSignal,
  readiness: Readiness,
  metrics: MetricRegistry | undefined,
): Promise<void> {
  const vas = new Store<VolumeAttachment>();
  const pvs = new Store<PersistentVolume>();
  const csiNodes = new Store<CsiNode>();
  // What the caches keep (other drivers' objects as stubs, so memory grows
  // with our volumes only), for watched objects and our writes' answers alike.
  const parse = cachedObjectParsers(driver.name);
  // A burst of cache changes (the first list, a relist, hundreds of attaches)
  // leaves garbage JSC would keep resident for minutes: collect it once the burst is over.
  const idleCollector = new IdleCollector();
  const noteChange = { onAdd: () => idleCollector.note(), onUpdate: () => idleCollector.note(), onDelete: () => idleCollector.note() };
  vas.addHandlers(noteChange);
  pvs.addHandlers(noteChange);
  idleCollector.run(signal);
  const reflectors = [
    reflectorFor(client, log, "VolumeAttachment", volumeAttachmentsPath, parse.volumeAttachment, vas),
    reflectorFor(client, log, "PersistentVolume", persistentVolumesPath, parse.persistentVolume, pvs),
    reflectorFor(client, log, "CSINode", csiNodesPath, parse.csiNode, csiNodes),
  ];

  const api = new AttacherApi(client, { vas, pvs, parse });
  // Attach and detach failures also become Warning events on the VA (beyond upstream).
  const events = new EventRecorder({ client, log, component: "csi-attacher", host: hostname(), signal });
  const writer = new VolumeAttachmentWriter({ api, driverName: driver.name, events });
  const pvWriter = new PersistentVolumeFinalizerWriter({ api, driverName: driver.name });
  // Shared with the reconciler, which marks VAs whose status disagrees with the driver.
  const forcedSyncs = new ForcedSyncs();
  const { capabilities } = driver;
  log.v(2).info("CSI driver capabilities", { driver: driver.name, ...capabilities });
  let handler: Handler;
  let vanished: VanishedVolumeAttachments | undefined;
  if (capabilities.controllerService && capabilities.publishUnpublish) {
    vanished = new VanishedVolumeAttachments({ driverName: driver.name, log });
    log.v(2).info("CSI driver supports ControllerPublishUnpublish, using real CSI handler", { driver: driver.name });
    handler = new CsiHandler({
      driverName: driver.name,
      csi,
      api,
      writer,
      pvWriter,
      pvs,
      vas,
      csiNodes,
      forcedSyncs,
      vanished,
      log,
      timeoutMs: config.timeoutMs,
      supportsPublishReadonly: capabilities.publishReadonly,
      supportsSingleNodeMultiWriter: capabilities.singleNodeMultiWriter,
      defaultFsType: config.defaultFsType,
    });
  } else {
    log.v(2).info("CSI driver does not support ControllerPublishUnpublish, using trivial handler", { driver: driver.name });
    handler = new TrivialHandler(writer, log);
  }

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
  const vaQueue = newQueue("csi-attacher-va", attachDetachLanes(vaWorkKind(vas), config.workerThreads));
  const pvQueue = newQueue("csi-attacher-pv");
  const controller = new AttachController({ driverName: driver.name, handler, vas, pvs, vaQueue, pvQueue, log, ...(vanished ? { vanished } : {}) });
  new BacklogWarning({ queues: [vaQueue, pvQueue], log }).run(signal);

  // As upstream: only a driver that can publish and list where its volumes
  // are published is reconciled (the trivial handler has nothing to redo).
  let reconciler: Reconciler | undefined;
  if (handler instanceof CsiHandler && capabilities.listVolumes && capabilities.listVolumesPublishedNodes) {
    log.v(2).info("CSI driver supports list volumes published nodes. Using capability to reconcile volume attachment objects with actual backend state", { driver: driver.name });
    reconciler = new Reconciler({
      driverName: driver.name,
      lister: csi,
      vas,
      pvs,
      csiNodes,
      forcedSyncs,
      vaQueue,
      periodMs: config.reconcileSyncMs,
      maxEntries: config.maxEntries,
      timeoutMs: config.timeoutMs,
      log,
    });
  }

  const watching = reflectors.map((reflector) => reflector.run(signal));
  // No worker may act on a half-filled cache: a PV or CSINode not yet listed
  // would look deleted.
  await Promise.race([Promise.all(reflectors.map((reflector) => reflector.waitForSync())), aborted(signal)]);
  if (signal.aborted) return;
  readiness.satisfy("caches-synced");
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

function reflectorFor<T extends KubeObject>(client: KubeClient, log: Logger, kind: string, path: string, parse: (raw: unknown) => T, store: Store<T>): Reflector<T> {
  return new Reflector<T>({ client, log, kind, path, parse, store });
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`fatal: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
