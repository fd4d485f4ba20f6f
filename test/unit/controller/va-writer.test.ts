import { describe, expect, it } from "bun:test";
import { Code } from "@connectrpc/connect";
import { VolumeAttachmentWriter } from "../../../src/controller/va-writer";
import { CsiCallError } from "../../../src/csi/errors";
import { KubeApiError } from "../../../src/kube/errors";
import { parseVolumeAttachment, type VolumeAttachment } from "../../../src/kube/objects/volume-attachment";

function va(metadata: object, status: object): VolumeAttachment {
  return parseVolumeAttachment({ metadata: { name: "va1", resourceVersion: "1", ...metadata }, spec: { attacher: "d", nodeName: "n", source: { persistentVolumeName: "pv1" } }, status });
}

/** A writer over an API that records each patch and answers with `answer(patch)`. */
function recordingWriter(answer: (patch: object) => VolumeAttachment, options: { attachErrorCodes?: boolean; lastWrites?: { record(written: VolumeAttachment): void } } = {}) {
  const patches: unknown[] = [];
  const api = {
    async patchVolumeAttachment(name: string, patch: object, subresource?: "status") {
      patches.push(subresource ? { name, patch, subresource } : { name, patch });
      return answer(patch);
    },
  };
  const writer = new VolumeAttachmentWriter({ api, driverName: "d", now: () => new Date("2026-11-22T10:00:00.999Z"), ...options });
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

  it("records the server's answer to every write it makes, for the reconciler to tell a write in flight", async () => {
    const recorded: string[] = [];
    // The server's answers in turn: finalizer on, attached, detach error saved, finalizer off, detached.
    const answers = [
      va({ resourceVersion: "2", finalizers: ["external-attacher/d"] }, { attached: false }),
      va({ resourceVersion: "3", finalizers: ["external-attacher/d"] }, { attached: true }),
      va({ resourceVersion: "4", finalizers: ["external-attacher/d"] }, { attached: true, detachError: { message: "busy" } }),
      va({ resourceVersion: "5" }, { attached: true, detachError: { message: "busy" } }),
      va({ resourceVersion: "6" }, { attached: false }),
    ];
    const answer = () => answers.shift() ?? va({ resourceVersion: "99" }, {});
    const { writer, patches } = recordingWriter(answer, { lastWrites: { record: (written) => recorded.push(written.metadata.resourceVersion) } });
    const attached = await writer.markAttached(await writer.ensureFinalizerAndNodeId(va({}, { attached: false }), "node-id"), {});
    await writer.saveDetachError(attached, new Error("busy"));
    await writer.markDetached(attached);
    expect({ writes: patches.length, recorded }).toEqual({ writes: 5, recorded: ["2", "3", "4", "5", "6"] });
  });

  it("wraps a failed finalizer patch in upstream's words", async () => {
    const { writer } = recordingWriter(() => {
      throw new KubeApiError(409, "Conflict", "the object has been modified");
    });
    await expect(writer.ensureFinalizerAndNodeId(va({}, { attached: false }), "node-id")).rejects.toThrow("could not save VolumeAttachment: the object has been modified");
  });
});
