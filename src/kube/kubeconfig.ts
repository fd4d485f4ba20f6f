import type { KubeConfig } from "@kubernetes/client-node/dist/config.js";
import type { Cluster } from "@kubernetes/client-node/dist/config_types.js";
import { realClock } from "../util/clock";
import { errorMessage } from "../util/error-message";
import { plainInCluster, plainKubeconfig, type PlainCredentials } from "./plain-kubeconfig";
import { TokenFile } from "./token-file";

/**
 * KubeConnection is how to reach the API server: its URL, the TLS material
 * for Bun's fetch, and the headers that authenticate a request.
 *
 * This is the only file that imports @kubernetes/client-node: it understands
 * every kubeconfig shape operators use (client certificates, static tokens,
 * exec credential plugins as EKS and GKE use, in-cluster service accounts),
 * and we use it for exactly that and nothing else. It is imported only when
 * plain-kubeconfig.ts cannot read the configuration alone (a plugin, or
 * something it does not know): loading it costs ~30 ms CPU at start.
 */
export interface KubeConnection {
  /** API server base URL without a trailing slash. */
  readonly server: string;
  readonly tls: KubeTlsOptions;
  /** Headers that authenticate one request; call it per request (tokens rotate). */
  authHeaders(): Promise<Record<string, string>>;
}

export interface KubeTlsOptions {
  ca?: string;
  cert?: string;
  key?: string;
  rejectUnauthorized?: boolean;
}

export interface KubeConnectionOptions {
  /** Kubeconfig path; empty or absent means in-cluster configuration. */
  kubeconfig?: string;
  /**
   * How long an authorization header is reused before client-node is asked
   * again. Exec plugins' tokens expire and in-cluster tokens are rotated on
   * disk, so the header must be refreshed; asking on every request would
   * re-read files or re-run plugins on the hot path. Default 60 s.
   */
  authRefreshMs?: number;
  /**
   * Directory the in-cluster service account files are read under, as
   * client-node's loadFromCluster takes it: the token, ca.crt and namespace
   * are read from `<prefix>/var/run/secrets/kubernetes.io/serviceaccount/`.
   * Default "" (the real root).
   */
  inClusterPathPrefix?: string;
  /**
   * For a token read from a file (the in-cluster service account's, which
   * the kubelet rotates): how often, at most, the file is checked for a new
   * token. It is re-read at least every `authRefreshMs` regardless.
   * Default 1 s.
   */
  tokenFileCheckMs?: number;
}

interface HttpsOptions {
  headers: Record<string, string>;
  ca?: string | Buffer;
  cert?: string | Buffer;
  key?: string | Buffer;
  rejectUnauthorized?: boolean;
  auth?: string;
}

function pemText(value: string | Buffer | undefined): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === "string" ? value : value.toString("utf8");
}

/** resolveKubeConnectionOptions fills the defaults of every optional field. */
function resolveKubeConnectionOptions(options: KubeConnectionOptions): Required<KubeConnectionOptions> {
  return {
    kubeconfig: options.kubeconfig ?? "",
    authRefreshMs: options.authRefreshMs ?? 60_000,
    inClusterPathPrefix: options.inClusterPathPrefix ?? "",
    tokenFileCheckMs: options.tokenFileCheckMs ?? 1_000,
  };
}

/** loadKubeConnection reads a kubeconfig file, or the in-cluster service account when none is given. */
export async function loadKubeConnection(options: KubeConnectionOptions = {}): Promise<KubeConnection> {
  const resolved = resolveKubeConnectionOptions(options);
  const { kubeconfig, inClusterPathPrefix } = resolved;
  if (!kubeconfig && (!process.env["KUBERNETES_SERVICE_HOST"] || !process.env["KUBERNETES_SERVICE_PORT"])) {
    throw new Error("no --kubeconfig given and not running in a cluster (KUBERNETES_SERVICE_HOST/PORT unset)");
  }
  const plain = kubeconfig ? plainKubeconfig(kubeconfig) : plainInCluster(process.env, inClusterPathPrefix);
  if (plain !== undefined) return plainConnection(plain, resolved.authRefreshMs, resolved.tokenFileCheckMs);
  return clientNodeConnection(await loadClientNodeConfig(kubeconfig, inClusterPathPrefix), resolved);
}

/** loadClientNodeConfig has client-node read the kubeconfig file, or the in-cluster files when `kubeconfig` is empty. */
async function loadClientNodeConfig(kubeconfig: string, inClusterPathPrefix: string): Promise<KubeConfig> {
  const { KubeConfig } = await import("@kubernetes/client-node/dist/config.js");
  const config = new KubeConfig();
  if (kubeconfig) {
    try {
      config.loadFromFile(kubeconfig);
    } catch (e: unknown) {
      // client-node's errors name neither the file nor (for YAML) fit one
      // line; say it as client-go's clientcmd does, so the one log line
      // names the file and what is wrong with it.
      const reason = errorMessage(e).split("\n")[0]?.trim() ?? "";
      throw new Error(`error loading config file ${JSON.stringify(kubeconfig)}: ${reason}`, { cause: e });
    }
  } else {
    config.loadFromCluster(inClusterPathPrefix);
  }
  return config;
}

/**
 * clientNodeConnection is the connection a config only client-node reads
 * describes: a token file's token is read as it rotates, any other
 * credential is asked of client-node again once `authRefreshMs` old.
 */
async function clientNodeConnection(config: KubeConfig, options: Required<KubeConnectionOptions>): Promise<KubeConnection> {
  const { kubeconfig, authRefreshMs, tokenFileCheckMs } = options;
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new Error(`kubeconfig ${kubeconfig || "(in-cluster)"} has no current cluster`);

  const first = await clientNodeCredentials(config, cluster);
  const server = cluster.server.replace(/\/+$/, "");
  const tokenFilePath = tokenFileOf(config);
  if (tokenFilePath !== undefined) {
    // Bound service-account tokens rotate on disk; read them ourselves so a
    // rotation is picked up within a second, not after client-node's minute.
    const tokenFile = new TokenFile({ path: tokenFilePath, maxAgeMs: authRefreshMs, checkIntervalMs: tokenFileCheckMs });
    return {
      server,
      tls: first.tls,
      authHeaders: async () => ({ Authorization: `Bearer ${tokenFile.token()}` }),
    };
  }
  let cached = { headers: first.headers, at: realClock.now() };
  return {
    server,
    tls: first.tls,
    async authHeaders() {
      // Refreshed when due, and when the clock was stepped back past the last refresh.
      const age = realClock.now() - cached.at;
      if (age > authRefreshMs || age < 0) {
        cached = { headers: (await clientNodeCredentials(config, cluster)).headers, at: realClock.now() };
      }
      return cached.headers;
    },
  };
}

/** clientNodeCredentials asks client-node for the headers and the TLS material of a request to `cluster` now. */
async function clientNodeCredentials(config: KubeConfig, cluster: Cluster): Promise<{ headers: Record<string, string>; tls: KubeTlsOptions }> {
  const https: HttpsOptions = { headers: {} };
  await config.applyToHTTPSOptions(https);
  const headers = { ...https.headers };
  if (https.auth) headers["Authorization"] = `Basic ${Buffer.from(https.auth).toString("base64")}`;
  const tls: KubeTlsOptions = {};
  const ca = pemText(https.ca);
  const cert = pemText(https.cert);
  const key = pemText(https.key);
  if (ca !== undefined) tls.ca = ca;
  if (cert !== undefined) tls.cert = cert;
  if (key !== undefined) tls.key = key;
  if (cluster.skipTLSVerify) tls.rejectUnauthorized = false;
  return { headers, tls };
}

/** plainConnection is the connection a kubeconfig without plugins describes: its headers never change, but a token file's content does. */
function plainConnection(plain: PlainCredentials, authRefreshMs: number, tokenFileCheckMs: number): KubeConnection {
  const tls: KubeTlsOptions = {};
  if (plain.ca !== undefined) tls.ca = plain.ca;
  if (plain.cert !== undefined) tls.cert = plain.cert;
  if (plain.key !== undefined) tls.key = plain.key;
  if (plain.skipTlsVerify) tls.rejectUnauthorized = false;
  const server = plain.server.replace(/\/+$/, "");
  if (plain.tokenFile !== undefined) {
    const tokenFile = new TokenFile({ path: plain.tokenFile, maxAgeMs: authRefreshMs, checkIntervalMs: tokenFileCheckMs });
    return { server, tls, authHeaders: async () => ({ Authorization: `Bearer ${tokenFile.token()}` }) };
  }
  const headers: Record<string, string> = plain.token === undefined ? {} : { Authorization: `Bearer ${plain.token}` };
  return { server, tls, authHeaders: async () => headers };
}

/** tokenFileOf returns the token file of the current user (client-node's in-cluster user has one), if any. */
function tokenFileOf(config: KubeConfig): string | undefined {
  const tokenFile: unknown = config.getCurrentUser()?.authProvider?.config?.["tokenFile"];
  return typeof tokenFile === "string" && tokenFile !== "" ? tokenFile : undefined;
}
