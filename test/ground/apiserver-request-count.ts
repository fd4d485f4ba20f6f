/**
 * What a rule or a benchmark asks of kube-apiserver's own count of the
 * requests it served (`apiserver_request_total` on its /metrics): how many
 * of each kind it answered, whoever sent them. Read before and after the
 * attacher's work and compared, it shows requests the attacher sent that
 * changed nothing, such as a patch answered 404.
 */

import { parseSamples } from "./prometheus-text";

/** The labels a count is selected by; a label left out matches any value. */
export interface RequestKind {
  readonly verb: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly code?: string;
}

/** One kind of request and how many kube-apiserver answered so far. */
export interface RequestTally {
  readonly verb: string;
  readonly resource: string;
  /** "" for the object itself. */
  readonly subresource: string;
  readonly code: string;
  readonly count: number;
}

/** Where kube-apiserver serves its metrics, and the admin's credentials to read them. */
export interface MetricsAccess {
  readonly server: string;
  readonly adminToken: string;
  readonly caPem: string;
}

/** apiserverRequests reads `apiserver_request_total` from kube-apiserver's /metrics. */
export async function apiserverRequests(access: MetricsAccess): Promise<RequestTally[]> {
  const response = await fetch(`${access.server}/metrics`, { headers: { Authorization: `Bearer ${access.adminToken}` }, tls: { ca: access.caPem } });
  const text = await response.text();
  if (!response.ok) throw new Error(`GET /metrics answered ${response.status}: ${text.slice(0, 200)}`);
  return requestTallies(text);
}

/** requestTallies reads the `apiserver_request_total` series of a metrics page: one tally per verb, resource, subresource and code, summed over its other labels. */
export function requestTallies(metricsText: string): RequestTally[] {
  const tallies = new Map<string, RequestTally>();
  for (const { name, labels, value } of parseSamples(metricsText)) {
    if (name !== "apiserver_request_total") continue;
    const kind = { verb: labels["verb"] ?? "", resource: labels["resource"] ?? "", subresource: labels["subresource"] ?? "", code: labels["code"] ?? "" };
    const key = requestKey(kind);
    tallies.set(key, { ...kind, count: (tallies.get(key)?.count ?? 0) + value });
  }
  return [...tallies.values()];
}

/** apiserverRequestCount sums the tallies of `kind`. */
export async function apiserverRequestCount(access: MetricsAccess, kind: RequestKind): Promise<number> {
  const matches = (tally: RequestTally) =>
    tally.verb === kind.verb && tally.resource === kind.resource && (kind.subresource === undefined || tally.subresource === kind.subresource) && (kind.code === undefined || tally.code === kind.code);
  return (await apiserverRequests(access)).filter(matches).reduce((total, tally) => total + tally.count, 0);
}

/** requestKey names a kind of request as a line of text: "PATCH volumeattachments/status 404". */
export function requestKey(kind: Omit<RequestTally, "count">): string {
  return `${kind.verb} ${kind.resource}${kind.subresource === "" ? "" : `/${kind.subresource}`} ${kind.code}`;
}
