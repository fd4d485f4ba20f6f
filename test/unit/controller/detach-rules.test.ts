import { describe, expect, it } from "bun:test";
import { Code } from "@connectrpc/connect";
import { createHandlerGround, finalizer, nowText } from "./support/handler-ground";
import { nodeIdAnnotation, vaJson, pvJson, csiNode1 } from "./support/rule-objects";

/**
 * The CSI handler's detach, as whole sequences of API writes and driver
 * calls against in-memory fakes. The same rules run end to end against
 * kube-apiserver in test/e2e/detach-rules.
 */

describe("detach", () => {
  const attachedVa = (extra: { annotations?: object; finalizers?: string[] } = {}) =>
    vaJson("va1", {
      metadata: { deletionTimestamp: "2026-11-22T09:30:00Z", finalizers: extra.finalizers ?? [finalizer], annotations: extra.annotations ?? { [nodeIdAnnotation]: "node1-id" } },
      status: { attached: true, attachmentMetadata: { devicePath: "/dev/x" } },
    });

  it("unpublishes, then removes the finalizer, which deletes the VA, and sends no status patch that could only 404", async () => {
    const ground = createHandlerGround({ vas: [attachedVa()], pvs: [pvJson("pv1")], csiNodes: [csiNode1] });
    await ground.sync("va1");
    expect({ calls: ground.calls, server: ground.serverVa("va1") }).toEqual({
      calls: [
        { csi: "ControllerUnpublishVolume", request: { volumeId: "vol-pv1", nodeId: "node1-id" } },
        { api: "patchVolumeAttachment", name: "va1", patch: { metadata: { finalizers: null } } },
      ],
      server: undefined,
    });
  });

  it("removes only our finalizer, then marks the VA detached while another finalizer holds it", async () => {
    const ground = createHandlerGround({ vas: [attachedVa({ finalizers: ["other/keep", finalizer] })], pvs: [pvJson("pv1")], csiNodes: [csiNode1] });
    await ground.sync("va1");
    expect(ground.calls.slice(1)).toEqual([
      { api: "patchVolumeAttachment", name: "va1", patch: { metadata: { finalizers: ["other/keep"] } } },
      { api: "patchVolumeAttachment", name: "va1", patch: { status: { attached: false, attachmentMetadata: null } }, subresource: "status" },
    ]);
  });

  it("uses the node ID annotation when the CSINode is gone", async () => {
    const ground = createHandlerGround({ vas: [attachedVa({ annotations: { [nodeIdAnnotation]: "remembered-id" } })], pvs: [pvJson("pv1")] });
    await ground.sync("va1");
    expect(ground.calls[0]).toEqual({ csi: "ControllerUnpublishVolume", request: { volumeId: "vol-pv1", nodeId: "remembered-id" } });
  });

  it("does nothing for a VA without our finalizer, unless the reconciler forced a sync", async () => {
    const va = vaJson("va1", { metadata: { deletionTimestamp: "2026-11-22T09:30:00Z", finalizers: ["other/keep"] }, status: { attached: false } });
    const ground = createHandlerGround({ vas: [va], pvs: [pvJson("pv1")], csiNodes: [csiNode1] });
    await ground.sync("va1");
    const unforced = [...ground.calls];
    ground.forcedSyncs.mark("va1");
    await ground.sync("va1");
    expect({ unforced, forced: ground.calls }).toEqual({
      unforced: [],
      forced: [{ csi: "ControllerUnpublishVolume", request: { volumeId: "vol-pv1", nodeId: "node1-id" } }],
    });
  });

  it("saves detachError without an errorCode (as upstream v4.13) and keeps the finalizer", async () => {
    const ground = createHandlerGround({ vas: [attachedVa()], pvs: [pvJson("pv1")], csiNodes: [csiNode1] });
    ground.script("ControllerUnpublishVolume", { code: Code.Internal, message: "backend down" });
    await expect(ground.sync("va1")).rejects.toThrow("backend down");
    expect({ calls: ground.calls.slice(1), finalizers: ground.va("va1").metadata.finalizers }).toEqual({
      calls: [
        {
          api: "patchVolumeAttachment",
          name: "va1",
          patch: { status: { detachError: { message: "rpc error: code = Internal desc = backend down", time: nowText } } },
          subresource: "status",
        },
      ],
      finalizers: [finalizer],
    });
  });
});

describe("forced syncs of deleted VAs", () => {
  it("drops the reconciler's mark when the VA is gone by its sync, so a new VA of that name is not forced", async () => {
    const attached = vaJson("va1", { metadata: { finalizers: [finalizer], annotations: { [nodeIdAnnotation]: "node1-id" } }, status: { attached: true } });
    const ground = createHandlerGround({ vas: [attached], pvs: [pvJson("pv1", { metadata: { finalizers: [finalizer] } })], csiNodes: [csiNode1] });
    ground.forcedSyncs.mark("va1");
    ground.vanish("va1");
    // Released from its last state, as any VA that vanished with our finalizer.
    ground.vanished.forget("va1");
    await ground.sync("va1");
    expect(ground.forcedSyncs.take("va1")).toBe(false);
  });
});
