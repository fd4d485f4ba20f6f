import { describe, expect, it } from "bun:test";
import { addFinalizerPatch, removeFinalizerPatch } from "../../../src/kube/finalizer-patches";

describe("finalizer JSON patches", () => {
  it("creates the list only if it is still absent", () => {
    expect(addFinalizerPatch(undefined, "f")).toEqual([
      { op: "test", path: "/metadata/finalizers", value: null },
      { op: "add", path: "/metadata/finalizers", value: ["f"] },
    ]);
  });

  it("replaces an empty list only if it is still empty", () => {
    expect(addFinalizerPatch([], "f")).toEqual([
      { op: "test", path: "/metadata/finalizers", value: [] },
      { op: "replace", path: "/metadata/finalizers", value: ["f"] },
    ]);
  });

  it("appends to a non-empty list without touching other finalizers", () => {
    expect(addFinalizerPatch(["kubernetes.io/pv-protection"], "f")).toEqual([{ op: "add", path: "/metadata/finalizers/-", value: "f" }]);
  });

  it("removes by index after testing that the index still holds the finalizer", () => {
    expect(removeFinalizerPatch(["a", "f", "b"], "f")).toEqual([
      { op: "test", path: "/metadata/finalizers/1", value: "f" },
      { op: "remove", path: "/metadata/finalizers/1" },
    ]);
    expect(removeFinalizerPatch(["a"], "f")).toBeUndefined();
  });
});
