import { describe, expect, it } from "bun:test";
import { finalizerName, sanitizeDriverName } from "../../../src/controller/driver-names";

describe("finalizer names", () => {
  it("turns every character outside [a-zA-Z0-9-] into a dash", () => {
    expect(finalizerName("hostpath.csi.k8s.io")).toBe("external-attacher/hostpath-csi-k8s-io");
    expect(sanitizeDriverName("io.kubernetes.storage/mock_driver")).toBe("io-kubernetes-storage-mock-driver");
  });

  it("appends X when the sanitized name ends in a dash", () => {
    expect(sanitizeDriverName("driver.")).toBe("driver-X");
    expect(sanitizeDriverName("driver-")).toBe("driver-X");
  });
});
