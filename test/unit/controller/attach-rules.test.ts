import { describe, expect, it } from "bun:test";
import { Code } from "@connectrpc/connect";
import { createHandlerGround, driverName, finalizer, nowText } from "./support/handler-ground";
import { nodeIdAnnotation, vaJson, pvJson, csiNode1, publishOfPv1 } from "./support/rule-objects";

/**
 * The CSI handler's attach, as whole sequences of API writes and driver
 * calls against in-memory fakes. The same rules run end to end against
 * kube-apiserver in test/e2e/attach-rules.
 */

describe("attach", () => {
  it("adds the PV finalizer, then the VA finalizer and node ID in one patch, then publishes, then marks attached", async () => {
    const ground = createHandlerGround({ vas: [vaJson("va1")], pvs: [pvJson("pv1")], csiNodes: [csiNode1] });
    ground.script("ControllerPublishVolume", { publishContext: { devicePath: "/dev/x" } });
    await ground.sync("va1");
    expect(ground.calls).toEqual([
      {
        api: "patchPersistentVolume",
        name: "pv1",
        patch: [
          { op: "test", path: "/metadata/finalizers", value: null },
          { op: "add", path: "/metadata/finalizers", value: [finalizer] },
        ],
      },
      { api: "patchVolumeAttachment", name: "va1", patch: { metadata: { finalizers: [finalizer], annotations: { [nodeIdAnnotation]: "node1-id" } } } },
      publishOfPv1,
      { api: "patchVolumeAttachment", name: "va1", patch: { status: { attached: true, attachmentMetadata: { devicePath: "/dev/x" } } }, subresource: "status" },
    ]);
  });

  it("sends no metadata patch when the VA already has the finalizer and node ID, and clears attachError when attached", async () => {
    const va = vaJson("va1", {
      metadata: { finalizers: ["other/keep", finalizer], annotations: { [nodeIdAnnotation]: "node1-id" } },
      status: { attached: false, attachError: { message: "old", time: "2026-11-22T09:00:00Z" } },
    });
    const ground = createHandlerGround({ vas: [va], pvs: [pvJson("pv1", { metadata: { finalizers: [finalizer] } })], csiNodes: [csiNode1] });
    await ground.sync("va1");
    expect(ground.calls).toEqual([
      publishOfPv1,
      { api: "patchVolumeAttachment", name: "va1", patch: { status: { attached: true, attachError: null } }, subresource: "status" },
    ]);
  });

  it("does nothing for an attached VA", async () => {
    const ground = createHandlerGround({ vas: [vaJson("va1", { status: { attached: true } })], pvs: [pvJson("pv1")], csiNodes: [csiNode1] });
    await ground.sync("va1");
    expect(ground.calls).toEqual([]);
  });

  it("publishes an attached VA once when the reconciler forced a sync, and writes nothing the status already says", async () => {
    const va = vaJson("va1", { metadata: { finalizers: [finalizer], annotations: { [nodeIdAnnotation]: "node1-id" } }, status: { attached: true } });
    const ground = createHandlerGround({ vas: [va], pvs: [pvJson("pv1", { metadata: { finalizers: [finalizer] } })], csiNodes: [csiNode1] });
    ground.forcedSyncs.mark("va1");
    await ground.sync("va1");
    await ground.sync("va1");
    expect(ground.calls).toEqual([publishOfPv1]);
  });

  it("saves a final driver error with its gRPC code and rethrows it for the back-off", async () => {
    const ground = createHandlerGround({ vas: [vaJson("va1")], pvs: [pvJson("pv1", { metadata: { finalizers: [finalizer] } })], csiNodes: [csiNode1] });
    ground.script("ControllerPublishVolume", { code: Code.NotFound, message: "no such volume" });
    const error = await ground.sync("va1").catch((e: unknown) => e);
    expect({ error: String(error), calls: ground.calls.slice(1) }).toEqual({
      error: "CsiCallError: rpc error: code = NotFound desc = no such volume",
      calls: [
        publishOfPv1,
        {
          api: "patchVolumeAttachment",
          name: "va1",
          patch: { status: { attachError: { message: "rpc error: code = NotFound desc = no such volume", time: nowText, errorCode: 5 } } },
          subresource: "status",
        },
      ],
    });
  });

  it("saves Go's 'context deadline exceeded' for a publish that outlives --timeout, and leaves attached false", async () => {
    const ground = createHandlerGround({ vas: [vaJson("va1")], pvs: [pvJson("pv1", { metadata: { finalizers: [finalizer] } })], csiNodes: [csiNode1] });
    ground.script("ControllerPublishVolume", { hang: true });
    await expect(ground.sync("va1")).rejects.toThrow("context deadline exceeded");
    expect(ground.calls.at(-1)).toEqual({
      api: "patchVolumeAttachment",
      name: "va1",
      patch: { status: { attachError: { message: "rpc error: code = DeadlineExceeded desc = context deadline exceeded", time: nowText, errorCode: 4 } } },
      subresource: "status",
    });
    expect(ground.va("va1").status?.attached).toBe(false);
  });

  it("refuses a PV being deleted before touching anything", async () => {
    const pv = pvJson("pv1", { metadata: { deletionTimestamp: "2026-11-22T09:00:00Z", finalizers: ["kubernetes.io/pv-protection"] } });
    const ground = createHandlerGround({ vas: [vaJson("va1")], pvs: [pv], csiNodes: [csiNode1] });
    await expect(ground.sync("va1")).rejects.toThrow('PersistentVolume "pv1" is marked for deletion');
    expect(ground.calls).toEqual([
      {
        api: "patchVolumeAttachment",
        name: "va1",
        patch: { status: { attachError: { message: 'PersistentVolume "pv1" is marked for deletion', time: nowText } } },
        subresource: "status",
      },
    ]);
  });

  it("attaches an inline volume without any PV write, with its attributes and secrets", async () => {
    const inline = {
      accessModes: ["ReadOnlyMany"],
      csi: { driver: driverName, volumeHandle: "inline-vol", readOnly: true, volumeAttributes: { a: "b" }, controllerPublishSecretRef: { name: "s", namespace: "ns" } },
    };
    const ground = createHandlerGround({ vas: [vaJson("va1", { inline })], csiNodes: [csiNode1], secrets: { "ns/s": { key: "value" } }, publishReadonly: true });
    await ground.sync("va1");
    expect(ground.calls.slice(0, 3)).toEqual([
      { api: "secretData", namespace: "ns", name: "s" },
      { api: "patchVolumeAttachment", name: "va1", patch: { metadata: { finalizers: [finalizer], annotations: { [nodeIdAnnotation]: "node1-id" } } } },
      {
        csi: "ControllerPublishVolume",
        request: {
          volumeId: "inline-vol",
          nodeId: "node1-id",
          volumeCapability: { mount: { fsType: "ext4" }, accessMode: { mode: "MULTI_NODE_READER_ONLY" } },
          readonly: true,
          secrets: { key: "value" },
          volumeContext: { a: "b" },
        },
      },
    ]);
  });
  it("refuses a VA naming both a PV and an inline spec, or neither, in upstream's words", async () => {
    const both = { ...vaJson("both"), spec: { attacher: driverName, nodeName: "node1", source: { persistentVolumeName: "pv1", inlineVolumeSpec: { csi: { driver: driverName, volumeHandle: "h" } } } } };
    const neither = { ...vaJson("neither"), spec: { attacher: driverName, nodeName: "node1", source: {} } };
    const ground = createHandlerGround({ vas: [both, neither], pvs: [pvJson("pv1")], csiNodes: [csiNode1] });
    const errors = await Promise.all(["both", "neither"].map((name) => ground.sync(name).catch((e: unknown) => String(e))));
    expect({ errors, writes: ground.calls.map((call) => ("api" in call ? call.api : call.csi)) }).toEqual({
      errors: [
        "Error: both InlineCSIVolumeSource and PersistentVolumeName specified in VA source",
        "Error: neither InlineCSIVolumeSource nor PersistentVolumeName specified in VA source",
      ],
      writes: ["patchVolumeAttachment", "patchVolumeAttachment"],
    });
  });
});
