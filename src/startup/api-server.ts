import type { Config } from "../cli/config";
import { version } from "../cli/version";
import { KubeClient } from "../kube/http-client";
import { loadKubeConnection, type KubeConnection } from "../kube/kubeconfig";
import { createApiThrottle } from "../kube/token-bucket";
import { StartupFailure } from "./errors";
import type { HttpEndpoint } from "./http-endpoint";

export interface ApiServerOptions {
  /** --kubeconfig ("" for in-cluster), --kube-api-qps and --kube-api-burst. */
  readonly config: Pick<Config, "kubeconfig" | "kubeApiQps" | "kubeApiBurst">;
  /** Its metrics, if kept, count every request and its wait for the throttle (`rest_client_*`). */
  readonly endpoint: Pick<HttpEndpoint, "metrics">;
}

/** ApiServer is the way to the API server: the work path's client, and what leader election builds its own on. */
export interface ApiServer {
  readonly connection: KubeConnection;
  /** The work path's client, throttled by --kube-api-qps. */
  readonly client: KubeClient;
  /** Every request's User-Agent, leader election's with a suffix. */
  readonly userAgent: string;
}

/**
 * connectToApiServer reads the kubeconfig (or the in-cluster config) and
 * builds the work path's client. Throws StartupFailure when there is no
 * usable config.
 */
export async function connectToApiServer(options: ApiServerOptions): Promise<ApiServer> {
  const { config } = options;
  const { metrics } = options.endpoint;
  // One bucket for every request of the work path, watches included (client-go
  // throttles a watch's opening request too). Leader election has its own
  // client. The flag schemas have already refused values it cannot take.
  const throttle = createApiThrottle(config.kubeApiQps, config.kubeApiBurst);
  const userAgent = `csi-attacher/${version}`;
  try {
    const connection = await loadKubeConnection({ kubeconfig: config.kubeconfig });
    const client = new KubeClient({ connection, userAgent, ...(throttle ? { throttle } : {}), ...(metrics ? { observer: metrics.kubeRequests } : {}) });
    return { connection, client, userAgent };
  } catch (e: unknown) {
    throw new StartupFailure("Failed to build a Kubernetes config", {}, { cause: e });
  }
}
