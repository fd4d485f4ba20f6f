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

  it("nulls a field that becomes undefined, and leaves out one undefined on both sides", () => {
    expect(createMergePatch({ status: { attached: true, detachError: { message: "x" } } }, { status: { attached: true, detachError: undefined, attachError: undefined } })).toEqual({ status: { detachError: null } });
  });

  it("carries an added object without its undefined fields, as its JSON would", () => {
    const patch = createMergePatch({ status: { attached: false } }, { status: { attached: false, attachError: { message: "boom", time: "t", errorCode: undefined } } });
    expect(JSON.stringify(patch)).toBe('{"status":{"attachError":{"message":"boom","time":"t"}}}');
  });

  it("leaves out an array equal by content, and replaces one that changed whole", () => {
    expect(createMergePatch({ metadata: { finalizers: ["a", "b"] } }, { metadata: { finalizers: ["a", "b"] } })).toEqual({});
    expect(createMergePatch({ metadata: { finalizers: ["a", "b"] } }, { metadata: { finalizers: ["b"] } })).toEqual({ metadata: { finalizers: ["b"] } });
  });

  it("carries a leaf that changed type, and none that kept its value", () => {
    expect(createMergePatch({ a: 1, b: "x", c: null, d: { e: 1 } }, { a: 1, b: { x: true }, c: null, d: 2 })).toEqual({ b: { x: true }, d: 2 });
  });

  it("refuses anything but two objects", () => {
    expect(() => createMergePatch([], {})).toThrow("createMergePatch needs two JSON objects");
  });
});
