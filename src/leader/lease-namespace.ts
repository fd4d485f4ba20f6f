import { readFileSync } from "node:fs";

/** Where the in-cluster service account's namespace is mounted. */
export const serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/** Inputs of {@link resolveLeaseNamespace}; tests pass their own. */
export interface LeaseNamespaceSources {
  /** --leader-election-namespace; "" means "not given". */
  readonly flag: string;
  /** The process environment; only POD_NAMESPACE is read. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Reads a file, or returns undefined when it cannot. Default: the real file system. */
  readonly readFile?: (path: string) => string | undefined;
}

/** resolveLeaseNamespaceSources fills the defaults of every optional field. */
function resolveLeaseNamespaceSources(sources: LeaseNamespaceSources): Required<LeaseNamespaceSources> {
  return { ...sources, readFile: sources.readFile ?? readIfPresent };
}

/**
 * resolveLeaseNamespace picks the Lease's namespace as csi-lib-utils does:
 * the flag, else POD_NAMESPACE, else the service account's namespace file
 * (trimmed), else "default".
 */
export function resolveLeaseNamespace(given: LeaseNamespaceSources): string {
  const sources = resolveLeaseNamespaceSources(given);
  if (sources.flag !== "") return sources.flag;
  const fromEnv = sources.env["POD_NAMESPACE"];
  if (fromEnv) return fromEnv;
  const fromFile = sources.readFile(serviceAccountNamespaceFile)?.trim();
  if (fromFile) return fromFile;
  return "default";
}

function readIfPresent(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (e: unknown) {
    // Outside a pod the file does not exist: fall through to "default", as upstream does.
    void e;
    return undefined;
  }
}
