import { readFileSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";

/**
 * PlainCredentials is what a kubeconfig without plugins says: where the
 * server is, the TLS material, and a bearer token or a token file.
 */
export interface PlainCredentials {
  /** API server URL as written (a trailing slash is trimmed by the caller). */
  readonly server: string;
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  /** insecure-skip-tls-verify: true. */
  readonly skipTlsVerify: boolean;
  /** A static bearer token. */
  readonly token?: string;
  /** A file holding the bearer token, re-read as it rotates (the in-cluster service account's). */
  readonly tokenFile?: string;
}

/*
 * Why this file exists: @kubernetes/client-node's KubeConfig evaluates its
 * whole generated API, proxy agents (socks, hpagent, undici) and auth
 * plugins when imported, ~30 ms of CPU at every start (bun-csi-attacher#8),
 * although the kubeconfigs of most deployments (in-cluster, or a file with a
 * CA, a client certificate or a token) need none of that. Those shapes are
 * read here with the same meaning client-node gives them; anything else
 * (exec and auth-provider plugins, basic auth, impersonation, token-file,
 * proxy-url, a field this file does not know, or a file it cannot make sense
 * of) answers undefined, and the caller asks client-node, which also words
 * the errors.
 */

/** Keys of a kubeconfig cluster entry read here; `extensions` carries tool metadata only. */
const clusterKeys: ReadonlySet<string> = new Set(["server", "certificate-authority", "certificate-authority-data", "insecure-skip-tls-verify", "extensions"]);
/** Keys of a kubeconfig user entry read here. */
const userKeys: ReadonlySet<string> = new Set(["client-certificate", "client-certificate-data", "client-key", "client-key-data", "token"]);

/**
 * plainKubeconfig reads the kubeconfig at `path` if it needs no plugin, or
 * returns undefined (client-node's turn). Relative file names are taken
 * from the kubeconfig's own directory, as client-node and client-go do; a
 * file name wins over inline data of the same item, as in client-node.
 */
export function plainKubeconfig(path: string): PlainCredentials | undefined {
  let doc: unknown;
  try {
    doc = Bun.YAML.parse(readFileSync(path, "utf8"));
  } catch (e: unknown) {
    // client-node reads it again and says what is wrong, naming the file.
    return undefined;
  }
  if (!isRecord(doc)) return undefined;
  const contextName = doc["current-context"];
  if (typeof contextName !== "string" || contextName === "") return undefined;
  const context = named(doc["contexts"], contextName, "context");
  if (context === undefined || typeof context["cluster"] !== "string" || typeof context["user"] !== "string") return undefined;
  const cluster = named(doc["clusters"], context["cluster"], "cluster");
  const user = named(doc["users"], context["user"], "user");
  if (cluster === undefined || user === undefined) return undefined;
  if (!Object.keys(cluster).every((key) => clusterKeys.has(key)) || !Object.keys(user).every((key) => userKeys.has(key))) return undefined;

  const server = cluster["server"];
  const skip = cluster["insecure-skip-tls-verify"];
  if (typeof server !== "string" || server === "" || (skip !== undefined && typeof skip !== "boolean")) return undefined;
  const root = dirname(path);
  const ca = fileOrData(root, cluster["certificate-authority"], cluster["certificate-authority-data"]);
  const cert = fileOrData(root, user["client-certificate"], user["client-certificate-data"]);
  const key = fileOrData(root, user["client-key"], user["client-key-data"]);
  const token = user["token"];
  if (ca === false || cert === false || key === false || (token !== undefined && typeof token !== "string")) return undefined;
  return {
    server,
    skipTlsVerify: skip === true,
    ...(ca === undefined ? {} : { ca }),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key }),
    // An empty token sends no header, as in client-node.
    ...(token === undefined || token === "" ? {} : { token }),
  };
}

/** Where the kubelet mounts a pod's service account, under client-node's path prefix. */
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

/**
 * plainInCluster is the in-cluster configuration as client-node's
 * loadFromCluster builds it: KUBERNETES_SERVICE_HOST/PORT (http for ports
 * 80, 8080 and 8001, an IPv6 address in brackets), the service account's
 * ca.crt and its token file. Undefined when the CA cannot be read (client-node
 * reports it); the caller has checked that the variables are set.
 */
export function plainInCluster(env: Readonly<Record<string, string | undefined>>, pathPrefix: string): PlainCredentials | undefined {
  const host = env["KUBERNETES_SERVICE_HOST"] ?? "";
  const port = env["KUBERNETES_SERVICE_PORT"] ?? "";
  const scheme = port === "80" || port === "8080" || port === "8001" ? "http" : "https";
  let ca: string;
  try {
    ca = readFileSync(`${pathPrefix}${serviceAccountDir}/ca.crt`, "utf8");
  } catch (e: unknown) {
    return undefined;
  }
  // As client-go's net.JoinHostPort: a host with a colon is an IPv6 literal and goes in brackets.
  return { server: `${scheme}://${host.includes(":") ? `[${host}]` : host}:${port}`, ca, skipTlsVerify: false, tokenFile: `${pathPrefix}${serviceAccountDir}/token` };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** named finds the entry called `name` in a kubeconfig list and returns its `field` (an empty one counts as {}). */
function named(list: unknown, name: string, field: string): Record<string, unknown> | undefined {
  if (!Array.isArray(list)) return undefined;
  const matches = list.filter((entry): entry is Record<string, unknown> => isRecord(entry) && entry["name"] === name);
  // Two entries of one name: leave the choice to client-node.
  if (matches.length !== 1) return undefined;
  const body = matches[0]?.[field];
  if (body === undefined || body === null) return {};
  return isRecord(body) ? body : undefined;
}

/** fileOrData returns the PEM text of a file (relative to `root`) or of base64 data; undefined when neither is given, false when they cannot be read. */
function fileOrData(root: string, file: unknown, data: unknown): string | undefined | false {
  if (file !== undefined && typeof file !== "string") return false;
  if (data !== undefined && typeof data !== "string") return false;
  if (file !== undefined && file !== "") {
    try {
      return readFileSync(isAbsolute(file) ? file : join(root, file), "utf8");
    } catch (e: unknown) {
      return false;
    }
  }
  if (data !== undefined && data !== "") return Buffer.from(data, "base64").toString("utf8");
  return undefined;
}
