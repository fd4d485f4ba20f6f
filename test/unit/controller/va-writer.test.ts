import { describe, expect, it } from "bun:test";
import { Code } from "@connectrpc/connect";
import { VolumeAttachmentWriter } from "../../../src/controller/va-writer";
import { CsiCallError } from "../../../src/csi/errors";
import { KubeApiError } from "../../../src/kube/errors";
import { parseVolumeAttachment, type VolumeAttachment } from "../../../src/kube/objects/volume-attachment";
import { FakeClock } from "../queue/fake-clock";

function va(metadata: object, status: object): VolumeAttachment {
  return parseVolumeAttachment({ metadata: { name: "va1", resourceVersion: "1", ...metadata }, spec: { attacher: "d", nodeName: "n", source: { persistentVolumeName: "pv1" } }, status });
}

/** A writer over an API that records each patch and answers with `answer(patch)`. */
function recordingWriter(answer: (patch: object) => VolumeAttachment, options: { attachErrorCodes?: boolean } = {}) {
  const patches: unknown[] = [];
  const api = {
    async patchVolumeAttachment(name: string, patch: object, subresource?: "status") {
      patches.push(subresource ? { name, patch, subresource } : { name, patch });
      return answer(patch);
    },
  };
  const writer = new VolumeAttachmentWriter({ api, driverName: "d", clock: new FakeClock(Date.parse("2026-11-22T10:00:00.999Z")), ...options });
  return { writer, patches };
}

describe("VA writer", () => {
  it("leaves errorCode out of attachError when told to, as upstream without MutableCSINodeAllocatableCount", async () => {
    const current = va({}, { attached: false });
    const { writer, patches } = recordingWriter(() => current, { attachErrorCodes: false });
    await writer.saveAttachError(current, new CsiCallError(Code.NotFound, "gone"));
    expect(patches).toEqual([
      { name: "va1", patch: { status: { attachError: { message: "rpc error: code = NotFound desc = gone", time: "2026-11-22T10:00:00Z" } } }, subresource: "status" },
    ]);
  });

  it("takes a NotFound on the detached status patch as detached", async () => {
    const held = va({ finalizers: ["external-attacher/d", "other/keep"], deletionTimestamp: "2026-11-22T09:00:00Z" }, { attached: true });
    let calls = 0;
    const { writer, patches } = recordingWriter(() => {
      calls += 1;
      if (calls === 2) throw new KubeApiError(404, "NotFound", 'volumeattachments.storage.k8s.io "va1" not found');
      return va({ finalizers: ["other/keep"], deletionTimestamp: "2026-11-22T09:00:00Z" }, { attached: true });
    });
    await writer.markDetached(held);
    expect(patches).toEqual([
      { name: "va1", patch: { metadata: { finalizers: ["other/keep"] } } },
      { name: "va1", patch: { status: { attached: false } }, subresource: "status" },
    ]);
  });

  it("wraps a failed detached mark in upstream's words", async () => {
    const held = va({ finalizers: ["external-attacher/d"], deletionTimestamp: "2026-11-22T09:00:00Z" }, { attached: true });
    const { writer } = recordingWriter(() => {
      throw new KubeApiError(409, "Conflict", "the object has been modified");
    });
    await expect(writer.markDetached(held)).rejects.toThrow("could not mark as detached: the object has been modified");
  });

  it("wraps a failed finalizer patch in upstream's words", async () => {
    const { writer } = recordingWriter(() => {
      throw new KubeApiError(409, "Conflict", "the object has been modified");
    });
    await expect(writer.ensureFinalizerAndNodeId(va({}, { attached: false }), "node-id")).rejects.toThrow("could not save VolumeAttachment: the object has been modified");
  });
});
