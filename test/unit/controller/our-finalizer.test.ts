import { describe, expect, it } from "bun:test";
import { carriesOurFinalizer } from "../../../src/controller/our-finalizer";

const withFinalizers = (finalizers: readonly string[] | null | undefined) => ({ metadata: { name: "x", resourceVersion: "1", finalizers } });

describe("carriesOurFinalizer", () => {
  it("finds the finalizer named after our driver, sanitized as upstream spells it, among others", () => {
    expect(carriesOurFinalizer(withFinalizers(["kubernetes.io/pv-protection", "external-attacher/csi-example-com"]), "csi.example.com")).toBe(true);
  });

  it("does not take another driver's attacher finalizer, the unsanitized name, or an absent or null list for ours", () => {
    expect(
      [["external-attacher/other-example-com"], ["external-attacher/csi.example.com"], [], null, undefined].map((finalizers) => carriesOurFinalizer(withFinalizers(finalizers), "csi.example.com")),
    ).toEqual([false, false, false, false, false]);
  });
});
