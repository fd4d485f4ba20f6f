import type { Counter, Histogram, Registry } from "prom-client";
import type { KubeRequestObserver } from "./kube-request-observer";
import { counterFrom, histogramFrom } from "./metric-builders";
import { metricTable } from "./metric-table";

/**
 * KubeRequestMetrics is client-go's `rest_client_requests_total` and
 * `rest_client_rate_limiter_duration_seconds` for the attacher's API client:
 * the API request rate by status code, and the time requests spent waiting
 * for the client-side rate limiter (how hard --kube-api-qps throttles).
 */
export class KubeRequestMetrics implements KubeRequestObserver {
  private readonly requests: Counter<"code" | "method" | "host">;
  private readonly rateLimiterDuration: Histogram<"verb" | "host">;

  constructor(registry: Registry) {
    this.requests = counterFrom(metricTable.kubeRequests, registry);
    this.rateLimiterDuration = histogramFrom(metricTable.kubeRateLimiterDuration, registry);
  }

  throttled(verb: string, host: string, seconds: number): void {
    this.rateLimiterDuration.observe({ verb, host }, seconds);
  }

  answered(method: string, host: string, code: string): void {
    this.requests.inc({ code, method, host });
  }
}
