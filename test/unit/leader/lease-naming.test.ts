import { describe, expect, it } from "bun:test";
import { leaderElectionIdentity, leaderElectionLeaseName, sanitizeLeaderElectionName } from "../../../src/leader/lease-name";
import { resolveLeaseNamespace, serviceAccountNamespaceFile } from "../../../src/leader/lease-namespace";
import { formatMicroTime, leaseSpecFromRecord, recordFromLeaseSpec } from "../../../src/leader/lease-record";

describe("lease name and identity", () => {
  it("names the lease external-attacher-leader-<driver> with every character outside [a-zA-Z0-9-] a dash", () => {
    expect(leaderElectionLeaseName("hostpath.csi.k8s.io")).toBe("external-attacher-leader-hostpath-csi-k8s-io");
    expect(leaderElectionLeaseName("io.kubernetes.storage.mock")).toBe("external-attacher-leader-io-kubernetes-storage-mock");
  });

  it("appends X when the sanitized name would end in a dash", () => {
    expect(sanitizeLeaderElectionName("driver.")).toBe("driver-X");
  });

  it("uses the sanitized hostname as identity", () => {
    expect(leaderElectionIdentity("node1.example.com")).toBe("node1-example-com");
    expect(leaderElectionIdentity("csi-attacher-7d9f-x2")).toBe("csi-attacher-7d9f-x2");
  });
});

describe("lease namespace", () => {
  const file = (content: string | undefined) => (path: string) => (path === serviceAccountNamespaceFile ? content : undefined);

  it("takes --leader-election-namespace first", () => {
    expect(resolveLeaseNamespace({ flag: "kube-system", env: { POD_NAMESPACE: "pods" }, readFile: file("sa") })).toBe("kube-system");
  });

  it("falls back to POD_NAMESPACE, then the service account's namespace file (trimmed), then default", () => {
    expect(resolveLeaseNamespace({ flag: "", env: { POD_NAMESPACE: "pods" }, readFile: file("sa") })).toBe("pods");
    expect(resolveLeaseNamespace({ flag: "", env: {}, readFile: file("csi-system\n") })).toBe("csi-system");
    expect(resolveLeaseNamespace({ flag: "", env: { POD_NAMESPACE: "" }, readFile: file("  \n") })).toBe("default");
    expect(resolveLeaseNamespace({ flag: "", env: {}, readFile: file(undefined) })).toBe("default");
  });
});

describe("lease record", () => {
  it("formats times as metav1.MicroTime: UTC with six fractional digits", () => {
    expect(formatMicroTime(Date.UTC(2026, 0, 2, 3, 4, 5, 678))).toBe("2026-01-02T03:04:05.678000Z");
  });

  it("reads missing spec fields as client-go's zero values", () => {
    expect(recordFromLeaseSpec({ holderIdentity: "a" })).toEqual({ holderIdentity: "a", leaseDurationSeconds: 0, acquireTime: "", renewTime: "", leaseTransitions: 0 });
    expect(recordFromLeaseSpec(undefined).holderIdentity).toBe("");
  });

  it("writes holder, duration and transitions always, and times only when set", () => {
    expect(leaseSpecFromRecord({ holderIdentity: "", leaseDurationSeconds: 1, acquireTime: "", renewTime: "2026-01-02T03:04:05.678000Z", leaseTransitions: 2 })).toEqual({
      holderIdentity: "",
      leaseDurationSeconds: 1,
      renewTime: "2026-01-02T03:04:05.678000Z",
      leaseTransitions: 2,
    });
  });
});
