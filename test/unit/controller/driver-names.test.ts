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

  it("names each driver's own finalizer however the calls for different drivers interleave", () => {
    const drivers = ["a.csi", "b.csi", "a.csi", "", "b.csi", "", "a.csi"];
    expect(drivers.map(finalizerName)).toEqual(drivers.map((driver) => `external-attacher/${sanitizeDriverName(driver)}`));
    expect(finalizerName("")).toBe("external-attacher/");
  });
});
