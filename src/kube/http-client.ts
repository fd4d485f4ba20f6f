import { ApiHttp2Connection } from "./api-http2-connection";
import { fetchResponse, streamedResponse, wholeResponse, type ApiAnswer, type ApiStream } from "./api-response";
import { KubeApiError, KubeResponseError, KubeTransportError } from "./errors";
import { errorMessage } from "../util/error-message";
import type { KubeConnection } from "./kubeconfig";
import { NotHttp2Error } from "./tls-socket";
import { noopKubeRequestObserver, type KubeRequestObserver } from "../metrics/kube-request-observer";

/** The patch types the attacher sends; each maps to its Content-Type. */
export type PatchType = "json" | "merge";

const patchContentTypes: Readonly<Record<PatchType, string>> = {
  json: "application/json-patch+json",
  merge: "application/merge-patch+json",
};

export interface KubeClientOptions {
  /** The API server's address, TLS settings and credentials. Required. */
  readonly connection: KubeConnection;
  /** User-Agent sent with every request, so API server audit logs name us. Default "csi-attacher". */
  readonly userAgent?: string;
  /**
   * Called before every request; resolves when the request may go. The
   * client-side rate limiter (--kube-api-qps/--kube-api-burst) plugs in here.
   * Default: no limit.
   */
  readonly throttle?: (signal?: AbortSignal) => Promise<void>;
  /** Told of every request's wait for `throttle` and of its answer (the `rest_client_*` metrics). Default: nobody. */
  readonly observer?: KubeRequestObserver;
}

/** resolveKubeClientOptions fills the defaults of every optional field. */
function resolveKubeClientOptions(options: KubeClientOptions): Required<KubeClientOptions> {
  return {
    connection: options.connection,
    userAgent: options.userAgent ?? "csi-attacher",
    throttle: options.throttle ?? (async () => {}),
    observer: options.observer ?? noopKubeRequestObserver,
  };
}

interface RequestInit {
  method: "GET" | "POST" | "PATCH" | "DELETE" | "PUT";
  body?: string;
  contentType?: string;
  signal?: AbortSignal;
}

/**
 * How each API server is reached, shared by every client of its
 * connection (the work path's, leader election's, events'), as client-go
 * shares one transport: one HTTP/2 connection (api-http2-connection.ts),
 * or "http/1.1" over fetch once the server's TLS chose no HTTP/2, for an
 * http:// server, and when a proxy is configured in the environment (fetch
 * honours HTTPS_PROXY and NO_PROXY as Go's ProxyFromEnvironment does).
 */
const apiServerWays = new WeakMap<KubeConnection, ApiHttp2Connection | "http/1.1">();

function apiServerWay(connection: KubeConnection): ApiHttp2Connection | "http/1.1" {
  let way = apiServerWays.get(connection);
  if (way === undefined) {
    const proxied = ["HTTPS_PROXY", "https_proxy"].some((name) => (process.env[name] ?? "") !== "");
    way = connection.server.startsWith("https://") && !proxied ? new ApiHttp2Connection({ server: connection.server, tls: connection.tls }) : "http/1.1";
    apiServerWays.set(connection, way);
  }
  return way;
}

/**
 * KubeClient is the attacher's own API client: JSON in, JSON out, Status
 * objects turned into KubeApiError, and watch streams read line by line.
 * It knows nothing of resource kinds; callers pass API paths.
 */
export class KubeClient {
  private readonly options: Required<KubeClientOptions>;
  /** The API server's host:port, as client-go's request metrics label it. */
  private readonly host: string;

  constructor(options: KubeClientOptions) {
    this.options = resolveKubeClientOptions(options);
    this.host = new URL(options.connection.server).host;
  }

  async get<T>(path: string, signal?: AbortSignal): Promise<T> {
    return this.json<T>(path, signal ? { method: "GET", signal } : { method: "GET" });
  }

  async patch<T>(path: string, type: PatchType, patch: unknown): Promise<T> {
    return this.json<T>(path, { method: "PATCH", body: JSON.stringify(patch), contentType: patchContentTypes[type] });
  }

  /** post creates `object` in the collection at `path` and returns what the server stored. */
  async post<T>(path: string, object: unknown, signal?: AbortSignal): Promise<T> {
    return this.sendObject<T>("POST", path, object, signal);
  }

  /**
   * put replaces the object at `path`. The object's metadata.resourceVersion
   * makes it a compare-and-swap: the server answers 409 Conflict if the
   * object changed since that version was read.
   */
  async put<T>(path: string, object: unknown, signal?: AbortSignal): Promise<T> {
    return this.sendObject<T>("PUT", path, object, signal);
  }

  private async sendObject<T>(method: "POST" | "PUT", path: string, object: unknown, signal: AbortSignal | undefined): Promise<T> {
    const init: RequestInit = { method, body: JSON.stringify(object), contentType: "application/json" };
    if (signal) init.signal = signal;
    return this.json<T>(path, init);
  }

  /**
   * stream opens a watch and yields each newline-delimited JSON event. The
   * iterator ends when the server closes the stream; aborting `signal`
   * closes it from our side.
   */
  async *stream(path: string, signal: AbortSignal): AsyncGenerator<unknown> {
    const response = await this.send(path, { method: "GET", signal }, "streamed");
    const reader = response.reader();
    const decoder = new TextDecoder();
    let buffered = "";
    try {
      for (;;) {
        let value: Uint8Array | undefined;
        try {
          value = await reader.read();
        } catch (e: unknown) {
          if (signal.aborted) throw e;
          throw new KubeTransportError(`watch ${path}: ${errorMessage(e)}`, { cause: e });
        }
        if (value === undefined) break;
        buffered += decoder.decode(value, { stream: true });
        let newline = buffered.indexOf("\n");
        while (newline !== -1) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          if (line !== "") yield parseJson(line, `watch ${path}`, true);
          newline = buffered.indexOf("\n");
        }
      }
      // The server ends every event with a newline: anything left is half an
      // event (a connection cut mid-frame). The caller renews the watch from
      // the last whole event, so nothing is lost, but it must hear of it.
      buffered += decoder.decode();
      if (buffered.trim() !== "") throw new KubeResponseError(`watch ${path}: stream ended in the middle of an event: ${preview(buffered)}`);
    } finally {
      await reader.cancel();
    }
  }

  private async json<T>(path: string, init: RequestInit): Promise<T> {
    const response = await this.send(path, init, "whole");
    return parseJson(await response.text(), `${init.method} ${path}`, false) as T;
  }

  private async send(path: string, init: RequestInit, body: "whole"): Promise<ApiAnswer>;
  private async send(path: string, init: RequestInit, body: "streamed"): Promise<ApiStream>;
  private async send(path: string, init: RequestInit, body: "whole" | "streamed"): Promise<ApiAnswer> {
    const throttledAt = performance.now();
    await this.options.throttle(init.signal);
    this.options.observer.throttled(init.method, this.host, (performance.now() - throttledAt) / 1000);
    const headers: Record<string, string> = {
      ...(await this.options.connection.authHeaders()),
      Accept: "application/json",
      "User-Agent": this.options.userAgent,
    };
    if (init.contentType) headers["Content-Type"] = init.contentType;
    let response: ApiAnswer;
    try {
      response = await this.exchange(path, init, headers, body);
    } catch (e: unknown) {
      if (init.signal?.aborted) throw e;
      this.options.observer.answered(init.method, this.host, "<error>");
      throw new KubeTransportError(`${init.method} ${path}: ${errorMessage(e)}`, { cause: e });
    }
    this.options.observer.answered(init.method, this.host, String(response.status));
    if (response.status < 200 || response.status > 299) {
      throw KubeApiError.from(response.status, await response.text(), `${init.method} ${path}`);
    }
    return response;
  }

  /** exchange sends the request the way the server is reached (apiServerWays), over HTTP/1.1 from the first time its TLS chose no HTTP/2. */
  private async exchange(path: string, init: RequestInit, headers: Record<string, string>, body: "whole"): Promise<ApiAnswer>;
  private async exchange(path: string, init: RequestInit, headers: Record<string, string>, body: "streamed"): Promise<ApiStream>;
  private async exchange(path: string, init: RequestInit, headers: Record<string, string>, body: "whole" | "streamed"): Promise<ApiAnswer>;
  private async exchange(path: string, init: RequestInit, headers: Record<string, string>, body: "whole" | "streamed"): Promise<ApiAnswer> {
    const { connection } = this.options;
    const way = apiServerWay(connection);
    if (way !== "http/1.1") {
      const request = { method: init.method, path, headers, ...(init.body === undefined ? {} : { body: init.body }), ...(init.signal === undefined ? {} : { signal: init.signal }) };
      try {
        return body === "streamed" ? streamedResponse(await way.stream(request)) : wholeResponse(await way.request(request));
      } catch (e: unknown) {
        if (!(e instanceof NotHttp2Error)) throw e;
        apiServerWays.set(connection, "http/1.1");
      }
    }
    return fetchResponse(
      await fetch(connection.server + path, {
        method: init.method,
        headers,
        body: init.body ?? null,
        signal: init.signal ?? null,
        tls: connection.tls,
      }),
    );
  }
}

/**
 * parseJson reads one JSON document of a response, naming the request when
 * it is not JSON. `showStart` adds the start of the text: only for watch
 * events (VAs, PVs, CSINodes), never for a plain GET, which may be a
 * Secret's, whose content must not reach a log line.
 */
function parseJson(text: string, what: string, showStart: boolean): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e: unknown) {
    if (!(e instanceof SyntaxError)) throw e;
    throw new KubeResponseError(`${what}: answer is not JSON (${e.message})${showStart ? `: ${preview(text)}` : ""}`, { cause: e });
  }
}

/** preview shows the start of a body in an error message: enough to recognise it, never a whole object. */
function preview(text: string): string {
  const limit = 80;
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > limit ? `${flat.slice(0, limit)}...` : flat;
}
