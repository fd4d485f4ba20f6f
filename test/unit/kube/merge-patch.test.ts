import { describe, expect, it } from "bun:test";
import { createMergePatch } from "../../../src/kube/merge-patch";

describe("createMergePatch", () => {
  it("carries only changed keys, nulls removed ones and replaces arrays whole", () => {
    const before = { status: { attached: false, attachError: { message: "boom" }, attachmentMetadata: { a: "1", b: "2" } }, metadata: { finalizers: ["x"] } };
    const after = { status: { attached: true, attachmentMetadata: { a: "1", c: "3" } }, metadata: { finalizers: ["x", "y"] } };
    expect(createMergePatch(before, after)).toEqual({
      status: { attached: true, attachError: null, attachmentMetadata: { b: null, c: "3" } },
      metadata: { finalizers: ["x", "y"] },
    });
  });

  it("treats undefined fields as absent, as serialized JSON does", () => {
    expect(createMergePatch({ status: { attached: true, attachError: undefined } }, { status: { attached: true } })).toEqual({});
  });
});
