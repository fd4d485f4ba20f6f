import { describe, expect, it } from "bun:test";
import { shouldEnqueueVaChange } from "../../../src/controller/attach-controller";
import { parseVolumeAttachment, type VolumeAttachment } from "../../../src/kube/objects/volume-attachment";

function va(resourceVersion: string, status: object, extra: object = {}): VolumeAttachment {
  return parseVolumeAttachment({
    metadata: { name: "va1", resourceVersion, ...extra },
    spec: { attacher: "d", nodeName: "n", source: { persistentVolumeName: "pv1" } },
    status,
  });
}

describe("VA update events", () => {
  it("ignores an update that only sets attachError, our own write", () => {
    expect(shouldEnqueueVaChange(va("1", { attached: false }), va("2", { attached: false, attachError: { message: "x" } }))).toBe(false);
  });

  it("ignores an update that only changes detachError", () => {
    expect(shouldEnqueueVaChange(va("1", { attached: true, detachError: { message: "a" } }), va("2", { attached: true, detachError: { message: "b" } }))).toBe(false);
  });

  it("enqueues a periodic resync of the same resourceVersion", () => {
    const same = va("1", { attached: false, attachError: { message: "x" } });
    expect(shouldEnqueueVaChange(same, same)).toBe(true);
  });

  it("enqueues when anything besides the errors changed", () => {
    expect(
      shouldEnqueueVaChange(va("1", { attached: false, attachError: { message: "x" } }), va("2", { attached: false, attachError: { message: "x" } }, { deletionTimestamp: "2026-11-21T00:00:00Z" })),
    ).toBe(true);
  });

  it("enqueues every change when neither version carries an error", () => {
    expect(shouldEnqueueVaChange(va("1", { attached: false }), va("2", { attached: true }))).toBe(true);
  });
});
