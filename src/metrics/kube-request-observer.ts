/**
 * What the API client reports of each request: the contract between
 * src/kube/http-client.ts and the `rest_client_*` series that record it
 * (client-go's request metrics, under component-base's names).
 */

/** KubeRequestObserver receives every request the API client sends. */
export interface KubeRequestObserver {
  /** The client-side rate limiter (--kube-api-qps/--kube-api-burst) let a `verb` request to `host` go after `seconds`; 0 when a token was there. */
  throttled(verb: string, host: string, seconds: number): void;
  /** A `method` request to `host` was answered with `code` (the status as text, "200"), or failed before any answer (`<error>`, as client-go counts it). */
  answered(method: string, host: string, code: string): void;
}

/** noopKubeRequestObserver discards every report; the default when no metrics are kept. */
export const noopKubeRequestObserver: KubeRequestObserver = {
  throttled() {},
  answered() {},
};
