import { describe, expect, it } from "bun:test";
import { requestKey, requestTallies } from "../../ground/apiserver-request-count";

describe("kube-apiserver's request tallies", () => {
  it("sums apiserver_request_total over the labels other than verb, resource, subresource and code, and skips every other series", () => {
    const page = [
      "# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
      "# TYPE apiserver_request_total counter",
      'apiserver_request_total{code="200",component="apiserver",dry_run="",group="storage.k8s.io",resource="volumeattachments",scope="resource",subresource="status",verb="PATCH",version="v1"} 7',
      'apiserver_request_total{code="200",component="apiserver",dry_run="All",group="storage.k8s.io",resource="volumeattachments",scope="resource",subresource="status",verb="PATCH",version="v1"} 2',
      'apiserver_request_total{code="404",component="apiserver",dry_run="",group="storage.k8s.io",resource="volumeattachments",scope="resource",subresource="status",verb="PATCH",version="v1"} 3',
      'apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="persistentvolumes",scope="resource",subresource="",verb="PATCH",version="v1"} 5',
      'apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="",resource="persistentvolumes",scope="resource",subresource="",verb="PATCH",version="v1"} 5',
    ].join("\n");
    expect(requestTallies(page).map((tally) => `${requestKey(tally)}=${tally.count}`)).toEqual([
      "PATCH volumeattachments/status 200=9",
      "PATCH volumeattachments/status 404=3",
      "PATCH persistentvolumes 200=5",
    ]);
  });
});
