import { describe, expect, it } from "bun:test";
import { Code } from "@connectrpc/connect";
import { VolumeAttachmentWriter } from "../../../src/controller/va-writer";
import { CsiCallError } from "../../../src/csi/errors";
import type { ObjectReference } from "../../../src/kube/objects/event";
import { parseVolumeAttachment, type VolumeAttachment } from "../../../src/kube/objects/volume-attachment";

const current: VolumeAttachment = parseVolumeAttachment({
  metadata: { name: "va1", uid: "uid-1", resourceVersion: "9" },
  spec: { attacher: "d", nodeName: "n", source: { persistentVolumeName: "pv1" } },
  status: { attached: false },
});

function writerWithEvents() {
  const events: { object: ObjectReference; reason: string; message: string }[] = [];
  const writer = new VolumeAttachmentWriter({
    api: { patchVolumeAttachment: async () => current },
    driverName: "d",
    events: { warning: (object, reason, message) => events.push({ object, reason, message }) },
  });
  return { writer, events };
}

const reference = { kind: "VolumeAttachment", apiVersion: "storage.k8s.io/v1", name: "va1", namespace: "", uid: "uid-1", resourceVersion: "9" };

describe("failure events of the VA writer", () => {
  it("records AttachFailed on the VA with the same text it saves in attachError", async () => {
    const { writer, events } = writerWithEvents();
    await writer.saveAttachError(current, new CsiCallError(Code.Internal, "array offline"));
    expect(events).toEqual([{ object: reference, reason: "AttachFailed", message: "rpc error: code = Internal desc = array offline" }]);
  });

  it("records DetachFailed on the VA with the same text it saves in detachError", async () => {
    const { writer, events } = writerWithEvents();
    await writer.saveDetachError(current, new CsiCallError(Code.Unavailable, "busy"));
    expect(events).toEqual([{ object: reference, reason: "DetachFailed", message: "rpc error: code = Unavailable desc = busy" }]);
  });
});
