import { describe, expect, it } from "bun:test";
import { TrivialHandler } from "../../../src/controller/trivial-handler";
import { VolumeAttachmentWriter } from "../../../src/controller/va-writer";
import { parsePersistentVolume } from "../../../src/kube/objects/persistent-volume";
import { parseVolumeAttachment, type VolumeAttachment } from "../../../src/kube/objects/volume-attachment";
import { Logger } from "../../../src/log/logger";

function va(status: object): VolumeAttachment {
  return parseVolumeAttachment({ metadata: { name: "va1", resourceVersion: "1" }, spec: { attacher: "d", nodeName: "n", source: { persistentVolumeName: "pv1" } }, status });
}

describe("trivial handler", () => {
  it("marks a VA attached with one status patch and no finalizer, and leaves attached VAs, deleted VAs and PVs alone", async () => {
    const patches: unknown[] = [];
    const api = {
      async patchVolumeAttachment(name: string, patch: object, subresource?: "status") {
        patches.push({ name, patch, subresource });
        return va({ attached: true });
      },
    };
    const handler = new TrivialHandler(new VolumeAttachmentWriter({ api, driverName: "d" }), new Logger({ sink: () => {} }));
    const released = [
      await handler.syncVolumeAttachment("va1", va({ attached: false })),
      await handler.syncVolumeAttachment("va1", va({ attached: true })),
      await handler.syncVolumeAttachment("va1", undefined),
    ];
    await handler.syncPersistentVolume(parsePersistentVolume({ metadata: { name: "pv1", deletionTimestamp: "2026-11-22T00:00:00Z", finalizers: ["external-attacher/d"] } }));
    expect({ patches, released }).toEqual({
      patches: [{ name: "va1", patch: { status: { attached: true } }, subresource: "status" }],
      released: [undefined, undefined, undefined],
    });
  });
});
