/**
 * A deliberately small Kubernetes API client for tests: they arrange and
 * inspect cluster state with it. It shares no code with the attacher's own
 * src/kube client, which is what the tests are testing.
 */

/** KubeObject is the part of any Kubernetes object tests commonly read. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    finalizers?: string[];
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    deletionTimestamp?: string;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

/** KubeList is a list response. */
export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata?: { resourceVersion?: string; continue?: string };
  items: T[];
}

/** One RFC 6902 JSON patch operation. */
export interface JsonPatchOperation {
  op: "add" | "remove" | "replace" | "test" | "move" | "copy";
  path: string;
  value?: unknown;
  from?: string;
}

/** PatchType names the three patch content types the apiserver takes. */
export type PatchType = "merge" | "json" | "strategic";

const patchContentTypes: Record<PatchType, string> = {
  merge: "application/merge-patch+json",
  json: "application/json-patch+json",
  strategic: "application/strategic-merge-patch+json",
};

/** AdminApiError is a non-2xx answer, with the apiserver's Status message. */
export class AdminApiError extends Error {
  override name = "AdminApiError";
  readonly status: number;
  /** Status.reason, e.g. "NotFound", "AlreadyExists", "Conflict", "Invalid". */
  readonly reason: string | undefined;
  readonly method: string;
  readonly path: string;

  constructor(method: string, path: string, status: number, reason: string | undefined, message: string) {
    super(`${method} ${path}: ${status}${reason === undefined ? "" : ` ${reason}`}: ${message}`);
    this.method = method;
    this.path = path;
    this.status = status;
    this.reason = reason;
  }
}

/** isNotFound tells whether `e` is an {@link AdminApiError} with status 404. */
export function isNotFound(e: unknown): boolean {
  return e instanceof AdminApiError && e.status === 404;
}

/** createIfAbsent creates `body` unless an object of its name is there already (a reused ground, objects a run reuses). */
export async function createIfAbsent(admin: Pick<AdminClient, "create">, path: string, body: KubeObject): Promise<void> {
  try {
    await admin.create(path, body);
  } catch (e: unknown) {
    if (!(e instanceof AdminApiError && e.reason === "AlreadyExists")) throw e;
  }
}

/** Options of {@link AdminClient}; a TestCluster has these fields. */
export interface AdminClientOptions {
  /** The apiserver's URL. */
  readonly server: string;
  /** Bearer token; the cluster's admin token bypasses RBAC. */
  readonly adminToken: string;
  /** PEM the server's certificate chains to. */
  readonly caPem: string;
}

/**
 * AdminClient sends JSON requests to absolute API paths such as
 * `/apis/storage.k8s.io/v1/volumeattachments/NAME` and returns parsed JSON;
 * any non-2xx answer throws an {@link AdminApiError}.
 */
export class AdminClient {
  readonly #server: string;
  readonly #token: string;
  readonly #ca: string;

  constructor(options: AdminClientOptions) {
    this.#server = options.server;
    this.#token = options.adminToken;
    this.#ca = options.caPem;
  }

  /** GET one object. */
  get<T extends KubeObject = KubeObject>(path: string): Promise<T> {
    return this.request<T>("GET", path);
  }

  /** GET a collection; `query` is appended as URL parameters. */
  list<T extends KubeObject = KubeObject>(path: string, query: Record<string, string> = {}): Promise<KubeList<T>> {
    const params = new URLSearchParams(query).toString();
    return this.request<KubeList<T>>("GET", params === "" ? path : `${path}?${params}`);
  }

  /** POST `body` to a collection path; returns the created object. */
  create<T extends KubeObject = KubeObject>(path: string, body: T): Promise<T> {
    return this.request<T>("POST", path, body);
  }

  /** PUT `body` to an object path (or its /status). */
  replace<T extends KubeObject = KubeObject>(path: string, body: T): Promise<T> {
    return this.request<T>("PUT", path, body);
  }

  /** PATCH an object; a JSON patch takes a list of operations. */
  patch<T extends KubeObject = KubeObject>(path: string, body: object | JsonPatchOperation[], type: PatchType = "merge"): Promise<T> {
    return this.request<T>("PATCH", path, body, patchContentTypes[type]);
  }

  /** DELETE an object; returns what the apiserver answers (the object, or a Status). */
  delete(path: string): Promise<KubeObject> {
    return this.request<KubeObject>("DELETE", path);
  }

  /**
   * Polls GET `path` every 100 ms until `predicate` holds for the object (or
   * for null while it does not exist) and returns what satisfied it. On
   * timeout the error shows the last object seen, which is usually the whole
   * story of what went wrong.
   */
  async waitFor<T extends KubeObject = KubeObject>(
    path: string,
    predicate: (obj: T | null) => boolean,
    timeoutMs = 30_000,
  ): Promise<T | null> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      let current: T | null;
      try {
        current = await this.get<T>(path);
      } catch (e: unknown) {
        if (!isNotFound(e)) throw e;
        current = null;
      }
      if (predicate(current)) return current;
      if (performance.now() >= deadline) {
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${path}; last seen: ${JSON.stringify(current, null, 2)}`);
      }
      await Bun.sleep(100);
    }
  }

  /**
   * Watches the object `name` in the collection at `collectionPath` from
   * `resourceVersion` on and returns the first version for which `predicate`
   * holds (null for its deletion). Where waitFor's polling can miss a state
   * that lasts less than its 100 ms between GETs (an error a retry clears at
   * once), this sees every version the API server stored after
   * `resourceVersion`: pass the resourceVersion of the write that starts what
   * you wait for.
   */
  async waitForVersion<T extends KubeObject = KubeObject>(
    collectionPath: string,
    name: string,
    resourceVersion: string,
    predicate: (obj: T | null) => boolean,
    timeoutMs = 30_000,
  ): Promise<T | null> {
    const query = new URLSearchParams({ watch: "true", fieldSelector: `metadata.name=${name}`, resourceVersion }).toString();
    const path = `${collectionPath}?${query}`;
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(), timeoutMs);
    let last: T | null | undefined;
    try {
      const res = await fetch(`${this.#server}${path}`, { headers: { Authorization: `Bearer ${this.#token}`, Accept: "application/json" }, tls: { ca: this.#ca }, signal: stop.signal });
      if (!res.ok || res.body === null) throw new AdminApiError("GET", path, res.status, undefined, await res.text());
      const decoder = new TextDecoder();
      let buffered = "";
      for await (const chunk of res.body) {
        buffered += decoder.decode(chunk, { stream: true });
        for (let newline = buffered.indexOf("\n"); newline !== -1; newline = buffered.indexOf("\n")) {
          const event = JSON.parse(buffered.slice(0, newline)) as { type: string; object: T };
          buffered = buffered.slice(newline + 1);
          if (event.type === "ERROR") throw new Error(`watch ${path}: ${JSON.stringify(event.object)}`);
          last = event.type === "DELETED" ? null : event.object;
          if (predicate(last)) return last;
        }
      }
      throw new Error(`watch ${path} ended before the version waited for; last seen: ${JSON.stringify(last, null, 2)}`);
    } catch (e: unknown) {
      if (!stop.signal.aborted) throw e;
      throw new Error(`timed out after ${timeoutMs} ms watching ${path}; last seen: ${JSON.stringify(last, null, 2)}`);
    } finally {
      clearTimeout(timer);
      stop.abort();
    }
  }

  /** Sends one request; `body` is JSON-encoded with `contentType`. */
  async request<T>(method: string, path: string, body?: unknown, contentType = "application/json"): Promise<T> {
    const headers: Record<string, string> = { Authorization: `Bearer ${this.#token}`, Accept: "application/json" };
    const init: BunFetchRequestInit = { method, headers, tls: { ca: this.#ca } };
    if (body !== undefined) {
      headers["Content-Type"] = contentType;
      init.body = JSON.stringify(body);
    }
    const res = await fetch(`${this.#server}${path}`, init);
    const text = await res.text();
    if (!res.ok) {
      const status = parseStatus(text);
      throw new AdminApiError(method, path, res.status, status?.reason, status?.message ?? text);
    }
    return (text === "" ? {} : JSON.parse(text)) as T;
  }
}

/** Reads a metav1.Status body, if that is what the apiserver sent. */
function parseStatus(text: string): { reason?: string; message?: string } | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== "object" || parsed === null) return undefined;
    const { reason, message } = parsed as Record<string, unknown>;
    return {
      ...(typeof reason === "string" ? { reason } : {}),
      ...(typeof message === "string" ? { message } : {}),
    };
  } catch (e: unknown) {
    // Not JSON (a proxy or a panic page): the caller falls back to the raw text.
    if (e instanceof SyntaxError) return undefined;
    throw e;
  }
}
