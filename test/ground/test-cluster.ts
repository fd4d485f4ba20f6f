/**
 * The real test ground: one etcd and one kube-apiserver on loopback, with no
 * scheduler or kubelet, and a kube-controller-manager only on request
 * ({@link TestCluster.startControllerManager}). Everything the attacher sees
 * (VolumeAttachments, PVs, CSINodes, Leases) is stored and validated by the
 * real apiserver, so API semantics in tests are the real ones.
 */
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ensureComponents, type ComponentPaths } from "./components";
import { freeLoopbackPorts } from "./free-ports";
import { startKubeControllerManager, type KubeControllerManager, type KubeControllerManagerOptions } from "./kube-controller-manager";
import { errorMessage, onProcessExit, spawnManaged, waitForCondition, type ManagedProcess } from "./managed-process";

/** Options of {@link startTestCluster}. */
export interface TestClusterOptions {
  /**
   * Directory for etcd data, keys, certificates, logs and the kubeconfig.
   * Default: a fresh temp dir, removed by stop(). A given dir is kept, and a
   * second start in it reuses its data, certificate and token (warm start).
   */
  readonly dir?: string;
  /** Binaries to run; default {@link ensureComponents}(). */
  readonly components?: ComponentPaths;
  /** Deadline in ms for etcd plus kube-apiserver to become ready; default 120000. */
  readonly startTimeoutMs?: number;
  /** kube-apiserver's secure port; default a free loopback port. */
  readonly apiserverPort?: number;
  /** Extra kube-apiserver flags, appended after (and so overriding) the defaults. */
  readonly extraApiserverArgs?: readonly string[];
  /**
   * Keep the ServiceAccount admission plugin, which gives pods their token
   * volume; only a ground with a node and the serviceaccount controller
   * (which makes the service accounts it requires) wants it. Default false.
   */
  readonly serviceAccountAdmission?: boolean;
}

/** How long the components took to become ready, in ms from spawn. */
export interface StartupTimings {
  readonly etcd: number;
  readonly apiserver: number;
}

/**
 * TestCluster is a running etcd + kube-apiserver pair. Dispose it (or call
 * stop) to end both; they are also killed if the test process exits first.
 */
export class TestCluster implements AsyncDisposable {
  /** Where data, certificates, logs and the kubeconfig live. */
  readonly dir: string;
  /** A kubeconfig with the server, its CA and the admin token. */
  readonly kubeconfigPath: string;
  /** The apiserver's URL, `https://127.0.0.1:<port>`. */
  readonly server: string;
  /** Bearer token of user "admin" in group system:masters (bypasses RBAC). */
  readonly adminToken: string;
  /** PEM of the apiserver's self-signed serving certificate chain; trust it as CA. */
  readonly caPem: string;
  /** etcd's client URL. */
  readonly etcdUrl: string;
  /** The running processes, apiserver first. */
  get processes(): readonly ManagedProcess[] {
    return this.#processes;
  }
  #processes: readonly ManagedProcess[];
  readonly #apiserverCommand: readonly string[];
  readonly #logDir: string;
  readonly #components: ComponentPaths;
  #controllerManager: KubeControllerManager | undefined;
  /** How long this start took, for reports and `cluster:up`'s banner. */
  readonly startupMs: StartupTimings;
  readonly #removeDirOnStop: boolean;
  readonly #unregisterExitHook: () => void;
  #stopping: Promise<void> | undefined;

  constructor(fields: {
    dir: string;
    kubeconfigPath: string;
    server: string;
    adminToken: string;
    caPem: string;
    etcdUrl: string;
    processes: readonly ManagedProcess[];
    apiserverCommand: readonly string[];
    logDir: string;
    components: ComponentPaths;
    startupMs: StartupTimings;
    removeDirOnStop: boolean;
  }) {
    this.dir = fields.dir;
    this.kubeconfigPath = fields.kubeconfigPath;
    this.server = fields.server;
    this.adminToken = fields.adminToken;
    this.caPem = fields.caPem;
    this.etcdUrl = fields.etcdUrl;
    this.#processes = fields.processes;
    this.#apiserverCommand = fields.apiserverCommand;
    this.#logDir = fields.logDir;
    this.#components = fields.components;
    this.startupMs = fields.startupMs;
    this.#removeDirOnStop = fields.removeDirOnStop;
    // Only a temp dir we made is ours to delete when the test process dies.
    const dir = fields.dir;
    this.#unregisterExitHook = fields.removeDirOnStop ? onProcessExit(() => rmSync(dir, { recursive: true, force: true })) : () => {};
  }

  /**
   * Stops the controller manager if one runs, the apiserver, then etcd (a
   * client would log errors all through its server's shutdown otherwise),
   * and removes a temp dir. Idempotent.
   */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      await this.#controllerManager?.stop();
      for (const child of this.processes) await child.stop();
      if (this.#removeDirOnStop) rmSync(this.dir, { recursive: true, force: true });
      this.#unregisterExitHook();
    })();
    return this.#stopping;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  /**
   * startControllerManager starts kube-controller-manager's attach/detach
   * and PV binder controllers against this apiserver with the admin
   * kubeconfig, and resolves once they are ready. Create the Nodes the
   * tests' Pods run on first (see startKubeControllerManager). One per
   * cluster; stop() ends it before the apiserver.
   */
  async startControllerManager(options: Pick<KubeControllerManagerOptions, "kubeApiQps" | "kubeApiBurst" | "startTimeoutMs" | "controllers" | "rootCaFile"> = {}): Promise<KubeControllerManager> {
    if (this.#controllerManager?.process.running === true) throw new Error("this test cluster already runs a kube-controller-manager");
    this.#controllerManager = await startKubeControllerManager({
      ...options,
      binary: this.#components.kubeControllerManager,
      kubeconfig: this.kubeconfigPath,
      logDir: this.#logDir,
    });
    return this.#controllerManager;
  }

  /**
   * restartApiserver stops kube-apiserver, runs `whileDown` (etcd is still
   * up: tests compact it there), and starts it again on the same port with
   * the same flags, resolving once it is ready. Clients see what they see in
   * a real control-plane upgrade: refused connections, then a fresh server.
   */
  async restartApiserver(whileDown?: () => Promise<void>, timeoutMs = 120_000): Promise<void> {
    const [apiserver, ...others] = this.#processes;
    if (apiserver === undefined) throw new Error("the cluster has no kube-apiserver to restart");
    await apiserver.stop();
    await whileDown?.();
    const restarted = spawnManaged({ name: "kube-apiserver", logDir: this.#logDir, command: this.#apiserverCommand });
    this.#processes = [restarted, ...others];
    await waitForApiserverReady(this.server, join(this.dir, "pki", "apiserver.crt"), this.adminToken, timeoutMs, [restarted, ...others]);
  }
  /**
   * compactEtcd moves etcd's revision on (one write outside /registry) and
   * compacts everything before it, through etcd's JSON gateway: every
   * resourceVersion a client holds is then gone, and a watch resumed from
   * one answers 410 Gone. Resolves with the compacted revision. Run it
   * while the apiserver is down (restartApiserver's `whileDown`), or its
   * watch cache serves the old versions on.
   */
  async compactEtcd(): Promise<number> {
    const put = await fetch(`${this.etcdUrl}/v3/kv/put`, { method: "POST", body: JSON.stringify({ key: btoa("/test-cluster/bump"), value: btoa(String(Date.now())) }) });
    if (!put.ok) throw new Error(`etcd put failed: ${await put.text()}`);
    const revision = ((await put.json()) as { header: { revision: string } }).header.revision;
    const compaction = await fetch(`${this.etcdUrl}/v3/kv/compaction`, { method: "POST", body: JSON.stringify({ revision, physical: true }) });
    if (!compaction.ok) throw new Error(`etcd compaction failed: ${await compaction.text()}`);
    return Number(revision);
  }

}

/**
 * startTestCluster starts etcd and kube-apiserver and resolves once the
 * apiserver's /readyz answers ok to the admin token over verified TLS. If
 * start-up fails half-way, whatever was started is stopped again and the
 * error carries the failing process's last stderr lines.
 */
export async function startTestCluster(options: TestClusterOptions = {}): Promise<TestCluster> {
  const components = options.components ?? (await ensureComponents());
  const timeoutMs = options.startTimeoutMs ?? 120_000;
  const ownsDir = options.dir === undefined;
  const dir = options.dir === undefined ? mkdtempSync(join(tmpdir(), "bun-csi-attacher-cluster-")) : resolve(options.dir);
  const layout = prepareDir(dir);
  const ports = await freeLoopbackPorts(["etcdClient", "etcdPeer", "apiserver"]);
  const apiserverPort = options.apiserverPort ?? ports.apiserver;
  const etcdUrl = `http://127.0.0.1:${ports.etcdClient}`;
  const etcdPeerUrl = `http://127.0.0.1:${ports.etcdPeer}`;
  const server = `https://127.0.0.1:${apiserverPort}`;

  const started: ManagedProcess[] = [];
  try {
    const t0 = performance.now();
    const etcd = spawnManaged({
      name: "etcd",
      logDir: layout.logs,
      command: [
        components.etcd,
        "--name=test",
        `--data-dir=${layout.etcdData}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=${etcdPeerUrl}`,
        `--initial-advertise-peer-urls=${etcdPeerUrl}`,
        `--initial-cluster=test=${etcdPeerUrl}`,
        // Test data is thrown away; fsync only costs time.
        "--unsafe-no-fsync",
        // A lone member on loopback: 10 ms ticks make the first election take
        // ~100 ms instead of up to ~1 s with the 100 ms / 1 s defaults.
        "--heartbeat-interval=10",
        "--election-timeout=100",
        "--log-level=warn",
      ],
    });
    started.push(etcd);
    await waitForCondition(async () => (await fetch(`${etcdUrl}/health`)).ok, {
      description: `etcd ${etcdUrl}/health`,
      timeoutMs,
      watch: [etcd],
    });
    const etcdReady = performance.now();

    const apiserverCommand = [
        components.kubeApiserver,
        `--etcd-servers=${etcdUrl}`,
        `--secure-port=${apiserverPort}`,
        "--bind-address=127.0.0.1",
        // Without it the apiserver looks for a default route and fails offline.
        "--advertise-address=127.0.0.1",
        // No --tls-cert-file: the apiserver self-signs into the cert dir.
        `--cert-dir=${layout.pki}`,
        `--token-auth-file=${layout.tokenFile}`,
        "--authorization-mode=RBAC",
        "--service-account-issuer=https://kubernetes.default.svc",
        `--service-account-key-file=${layout.serviceAccountPublicKey}`,
        `--service-account-signing-key-file=${layout.serviceAccountPrivateKey}`,
        "--service-cluster-ip-range=10.0.0.0/24",
        // Without a node nothing runs pods, and no serviceaccount controller
        // makes the service accounts this plugin requires of them.
        ...(options.serviceAccountAdmission === true ? [] : ["--disable-admission-plugins=ServiceAccount"]),
        "--profiling=false",
        ...(options.extraApiserverArgs ?? []),
    ];
    const apiserver = spawnManaged({ name: "kube-apiserver", logDir: layout.logs, command: apiserverCommand });
    // Stop order is apiserver first.
    started.unshift(apiserver);
    const caPath = join(layout.pki, "apiserver.crt");
    await waitForApiserverReady(server, caPath, layout.adminToken, Math.max(1, timeoutMs - (etcdReady - t0)), [apiserver, etcd]);
    const apiserverReady = performance.now();

    const caPem = readFileSync(caPath, "utf8");
    const kubeconfigPath = join(dir, "kubeconfig");
    writeFileSync(kubeconfigPath, kubeconfigYaml(server, caPem, layout.adminToken), { mode: 0o600 });
    return new TestCluster({
      dir,
      kubeconfigPath,
      server,
      adminToken: layout.adminToken,
      caPem,
      etcdUrl,
      processes: started,
      apiserverCommand,
      logDir: layout.logs,
      components,
      startupMs: { etcd: Math.round(etcdReady - t0), apiserver: Math.round(apiserverReady - etcdReady) },
      removeDirOnStop: ownsDir,
    });
  } catch (e: unknown) {
    for (const child of started) await child.stop();
    // The logs are what explains the failure, so the dir stays.
    throw new Error(`starting the test cluster failed (logs in ${layout.logs}): ${errorMessage(e)}`, { cause: e });
  }
}

/**
 * Polls /readyz with the admin token over TLS verified against the
 * self-signed certificate, until the apiserver says "ok".
 */
async function waitForApiserverReady(server: string, caPath: string, token: string, timeoutMs: number, watch: readonly ManagedProcess[]): Promise<void> {
  await waitForCondition(
    async () => {
      // The cert dir is written before the port opens; until then, not ready.
      if (!existsSync(caPath)) return false;
      const res = await fetch(`${server}/readyz`, {
        headers: { Authorization: `Bearer ${token}` },
        tls: { ca: readFileSync(caPath, "utf8") },
      });
      return res.ok && (await res.text()) === "ok";
    },
    { description: `kube-apiserver ${server}/readyz`, timeoutMs, watch },
  );
}

interface DirLayout {
  readonly etcdData: string;
  readonly pki: string;
  readonly logs: string;
  readonly tokenFile: string;
  readonly adminToken: string;
  readonly serviceAccountPrivateKey: string;
  readonly serviceAccountPublicKey: string;
}

/**
 * Creates the directory layout and the credentials the apiserver reads at
 * start-up, keeping any from an earlier start so a kubeconfig written then
 * stays valid.
 */
function prepareDir(dir: string): DirLayout {
  const layout = {
    etcdData: join(dir, "etcd-data"),
    pki: join(dir, "pki"),
    logs: join(dir, "logs"),
    tokenFile: join(dir, "pki", "tokens.csv"),
    serviceAccountPrivateKey: join(dir, "pki", "service-account.key"),
    serviceAccountPublicKey: join(dir, "pki", "service-account.pub"),
  };
  for (const sub of [layout.pki, layout.logs]) mkdirSync(sub, { recursive: true, mode: 0o700 });
  // etcd refuses a data dir that is group- or world-readable.
  mkdirSync(layout.etcdData, { recursive: true, mode: 0o700 });

  if (!existsSync(layout.serviceAccountPrivateKey) || !existsSync(layout.serviceAccountPublicKey)) {
    // Node's crypto instead of openssl: no external tool to find or to fail.
    const { privateKey, publicKey } = generateKeyPairSync("rsa", {
      modulusLength: 2048,
      privateKeyEncoding: { type: "pkcs8", format: "pem" },
      publicKeyEncoding: { type: "spki", format: "pem" },
    });
    writeFileSync(layout.serviceAccountPrivateKey, privateKey, { mode: 0o600 });
    writeFileSync(layout.serviceAccountPublicKey, publicKey, { mode: 0o644 });
  }

  let adminToken = existsSync(layout.tokenFile) ? (readFileSync(layout.tokenFile, "utf8").split(",")[0] ?? "") : "";
  if (adminToken === "") {
    adminToken = randomBytes(24).toString("hex");
    // Format: token,user,uid,"group1,group2". system:masters bypasses RBAC.
    writeFileSync(layout.tokenFile, `${adminToken},admin,admin-uid,"system:masters"\n`, { mode: 0o600 });
  }
  return { ...layout, adminToken };
}

function kubeconfigYaml(server: string, caPem: string, token: string): string {
  const caData = Buffer.from(caPem).toString("base64");
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: test-cluster",
    "  cluster:",
    `    server: ${server}`,
    `    certificate-authority-data: ${caData}`,
    "users:",
    "- name: admin",
    "  user:",
    `    token: ${token}`,
    "contexts:",
    "- name: test-cluster",
    "  context:",
    "    cluster: test-cluster",
    "    user: admin",
    "current-context: test-cluster",
    "",
  ].join("\n");
}
