/**
 * What a rule asks of kube-apiserver's own count of the requests it served
 * (`apiserver_request_total` on its /metrics): how many of one kind it
 * answered, whoever sent them. A rule reads it before and after the
 * attacher's work and compares, so it sees requests the attacher sent and
 * that changed nothing, such as a patch answered 404.
 */

/** The labels a count is selected by; a label left out matches any value. */
export interface RequestKind {
  readonly verb: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly code?: string;
}

/** Where kube-apiserver serves its metrics, and the admin's credentials to read them. */
export interface MetricsAccess {
  readonly server: string;
  readonly adminToken: string;
  readonly caPem: string;
}

/** apiserverRequestCount sums `apiserver_request_total` over every series of `kind`. */
export async function apiserverRequestCount(access: MetricsAccess, kind: RequestKind): Promise<number> {
  const response = await fetch(`${access.server}/metrics`, { headers: { Authorization: `Bearer ${access.adminToken}` }, tls: { ca: access.caPem } });
  const text = await response.text();
  if (!response.ok) throw new Error(`GET /metrics answered ${response.status}: ${text.slice(0, 200)}`);
  const wanted: Record<string, string | undefined> = { verb: kind.verb, resource: kind.resource, subresource: kind.subresource, code: kind.code };
  let total = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith("apiserver_request_total{")) continue;
    const labels = new Map([...line.matchAll(/(\w+)="([^"]*)"/g)].map((match) => [match[1], match[2]]));
    if (Object.entries(wanted).every(([name, value]) => value === undefined || (labels.get(name) ?? "") === value)) {
      total += Number(line.slice(line.lastIndexOf(" ") + 1));
    }
  }
  return total;
}
