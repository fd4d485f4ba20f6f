import type { Server } from "bun";
import type { Logger } from "../log/logger";
import { errorMessage } from "../util/error-message";
import { HttpServerStartError } from "./errors";
import type { LeaderElectionHealthCheck } from "./leader-election-health";
import { parseListenAddress } from "./listen-address";
import type { Readiness } from "./readiness";

/** The path upstream serves the leader election health check on (csi-lib-utils HealthCheckerAddress). */
export const leaderElectionHealthPath = "/healthz/leader-election";

/** What the metrics path serves: the registry's text exposition. */
export interface MetricsSource {
  readonly contentType: string;
  render(): Promise<string>;
}

/** Options for {@link startHttpServer}. */
export interface HttpServerOptions {
  /** `--http-endpoint` (or `--metrics-address`): `host:port`, `:port` for every interface. Required. */
  readonly address: string;
  /** `--metrics-path`. Default "/metrics". */
  readonly metricsPath?: string;
  /** The metrics to serve on the metrics path. Required. */
  readonly metrics: MetricsSource;
  /** What `/readyz` waits for. Required. */
  readonly readiness: Readiness;
  /** With leader election on, its health check, served on {@link leaderElectionHealthPath}; the path does not exist otherwise. Default: none. */
  readonly leaderElection?: LeaderElectionHealthCheck;
  /** Where "ServeMux listening" and render failures go. Required. */
  readonly log: Logger;
}

/** A listening HTTP endpoint. */
export interface RunningHttpServer extends AsyncDisposable {
  /** The port it listens on (the kernel's choice when the address said port 0). */
  readonly port: number;
  /** Stops listening and closes open connections. */
  stop(): Promise<void>;
}

/** ResolvedHttpServerOptions are the options with every default filled; without leader election there is no health check to serve. */
type ResolvedHttpServerOptions = HttpServerOptions & Required<Pick<HttpServerOptions, "metricsPath">>;

/** resolveHttpServerOptions fills the defaults of every optional field. */
function resolveHttpServerOptions(options: HttpServerOptions): ResolvedHttpServerOptions {
  return { ...options, metricsPath: options.metricsPath ?? "/metrics" };
}

/**
 * startHttpServer listens on the operator's address and serves, like the Go
 * sidecar's ServeMux, the metrics path and (with leader election)
 * `/healthz/leader-election`; beyond upstream also `/healthz` (the process
 * answers) and `/readyz` (driver probed and caches synced). Any other path
 * is 404. Failing to listen throws {@link HttpServerStartError}: upstream
 * exits 1 then.
 */
export function startHttpServer(given: HttpServerOptions): RunningHttpServer {
  const options = resolveHttpServerOptions(given);
  const { host, port } = parseListenAddress(options.address);
  const { metricsPath, log } = options;
  const fetch = (request: Request): Promise<Response> | Response => {
    const path = new URL(request.url).pathname;
    if (path === metricsPath) return serveMetrics(options.metrics, log);
    if (path === "/healthz") return text(200, "ok");
    if (path === "/readyz") return serveReadiness(options.readiness);
    if (path === leaderElectionHealthPath && options.leaderElection !== undefined) {
      const failure = options.leaderElection.check();
      // Go's http.Error body, as csi-lib-utils writes it.
      return failure === undefined ? text(200, "ok") : text(500, `internal server error: ${failure.message}\n`);
    }
    return text(404, "404 page not found\n");
  };

  const server = listen(host, port, fetch, options.address);
  log.info("ServeMux listening", { address: options.address, port: server.port, metricsPath });
  const stop = () => server.stop(true);
  return { port: server.port ?? port, stop, [Symbol.asyncDispose]: stop };
}

/**
 * listen binds the server. Go's `:port` listens on every IPv4 and IPv6
 * address; "::" does that on a dual-stack host, and "0.0.0.0" is the
 * fallback where IPv6 is off.
 */
function listen(host: string | undefined, port: number, fetch: (request: Request) => Promise<Response> | Response, address: string): Server<undefined> {
  const candidates = host === undefined ? ["::", "0.0.0.0"] : [host];
  let failure: unknown;
  for (const hostname of candidates) {
    try {
      // With development off, Bun 1.4 binds with SO_REUSEPORT unless told
      // not to: a second attacher on the same port would then share it
      // silently instead of failing as Go's ListenAndServe does.
      return Bun.serve({ hostname, port, fetch, development: false, reusePort: false });
    } catch (e: unknown) {
      failure = e;
      // A taken port is taken on every address; only a missing IPv6 stack is worth the fallback.
      if (e instanceof Error && (e as NodeJS.ErrnoException).code === "EADDRINUSE") break;
    }
  }
  throw new HttpServerStartError(`failed to start the HTTP server at "${address}": ${errorMessage(failure)}`, { cause: failure });
}

async function serveMetrics(metrics: MetricsSource, log: Logger): Promise<Response> {
  try {
    return new Response(await metrics.render(), { headers: { "content-type": metrics.contentType } });
  } catch (e: unknown) {
    log.error("Failed to render metrics", { err: e });
    return text(500, `failed to render metrics: ${errorMessage(e)}\n`);
  }
}

function serveReadiness(readiness: Readiness): Response {
  const missing = readiness.missing();
  if (missing.length === 0) return text(200, "ok");
  return text(503, `not ready: waiting for ${missing.join(", ")}\n`);
}

function text(status: number, body: string): Response {
  return new Response(body, { status, headers: { "content-type": "text/plain; charset=utf-8" } });
}
