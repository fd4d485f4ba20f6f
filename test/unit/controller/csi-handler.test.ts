import { describe, expect, it } from "bun:test";
import { Code } from "@connectrpc/connect";
import { parsePersistentVolume } from "../../../src/kube/objects/persistent-volume";
import { parseVolumeAttachment } from "../../../src/kube/objects/volume-attachment";
import { pvNeedsSync } from "../../../src/controller/pv-needs-sync";
import { createHandlerGround, type Call, driverName, finalizer, nowText } from "./support/handler-ground";

/**
 * The CSI handler's whole sequences of API writes and driver calls, against
 * in-memory fakes. The same rules run end to end against kube-apiserver in
 * test/e2e/attach-rules, detach-rules and pv-finalizers.
 */

const nodeIdAnnotation = "csi.alpha.kubernetes.io/node-id";

function vaJson(name: string, extra: { pv?: string; node?: string; metadata?: object; status?: object; inline?: object } = {}) {
  const source = extra.inline ? { inlineVolumeSpec: extra.inline } : { persistentVolumeName: extra.pv ?? "pv1" };
  return {
    metadata: { name, resourceVersion: "1", ...extra.metadata },
    spec: { attacher: driverName, nodeName: extra.node ?? "node1", source },
    status: extra.status ?? { attached: false },
  };
}

function pvJson(name: string, extra: { metadata?: object; spec?: object; csi?: object } = {}) {
  return {
    metadata: { name, resourceVersion: "1", ...extra.metadata },
    spec: {
      accessModes: ["ReadWriteOnce"],
      csi: { driver: driverName, volumeHandle: `vol-${name}`, ...extra.csi },
      ...extra.spec,
    },
  };
}

const csiNode1 = { metadata: { name: "node1", resourceVersion: "1" }, spec: { drivers: [{ name: driverName, nodeID: "node1-id" }] } };

const publishOfPv1: Call = {
  csi: "ControllerPublishVolume",
  request: {
    volumeId: "vol-pv1",
    nodeId: "node1-id",
    volumeCapability: { mount: { fsType: "ext4" }, accessMode: { mode: "SINGLE_NODE_WRITER" } },
  },
};

/** The patch that removes our finalizer from pv1, where it sits at `index`. */
function removingOurPvFinalizerAt(index: number): Call {
  const path = `/metadata/finalizers/${index}`;
  return { api: "patchPersistentVolume", name: "pv1", patch: [{ op: "test", path, value: finalizer }, { op: "remove", path }] };
}

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

describe("a VA that vanished still carrying our finalizer (kubernetes#77988)", () => {
  const vanishedVa = () => vaJson("va1", { metadata: { finalizers: [finalizer], annotations: { [nodeIdAnnotation]: "node1-id" } }, status: { attached: true } });
  const unpublishOfPv1: Call = { csi: "ControllerUnpublishVolume", request: { volumeId: "vol-pv1", nodeId: "node1-id" } };
  const deletingPv = () => pvJson("pv1", { metadata: { deletionTimestamp: "2026-11-22T09:30:00Z", finalizers: [finalizer] } });

  it("is unpublished from its last state, and its PV keeps our finalizer until then", async () => {
    const ground = createHandlerGround({ vas: [vanishedVa()], pvs: [deletingPv()], csiNodes: [csiNode1] });
    const gone = ground.vanish("va1");
    const owed = ground.vanished.note(gone);
    await ground.handler.syncPersistentVolume(ground.pv("pv1"));
    const beforeUnpublish = [...ground.calls];
    const releasedPv = await ground.sync("va1");
    await ground.handler.syncPersistentVolume(ground.pv("pv1"));
    const again = await ground.sync("va1");
    expect({ owed, beforeUnpublish, releasedPv, calls: ground.calls, again }).toEqual({
      owed: true,
      beforeUnpublish: [],
      releasedPv: "pv1",
      calls: [unpublishOfPv1, removingOurPvFinalizerAt(0)],
      again: undefined,
    });
  });

  it("stays owed after a failed unpublish, and is retried", async () => {
    const ground = createHandlerGround({ vas: [vanishedVa()], pvs: [pvJson("pv1", { metadata: { finalizers: [finalizer] } })], csiNodes: [csiNode1] });
    const gone = ground.vanish("va1");
    ground.vanished.note(gone);
    ground.script("ControllerUnpublishVolume", { code: Code.Unavailable, message: "driver restarting" });
    await expect(ground.sync("va1")).rejects.toThrow("driver restarting");
    expect(await ground.sync("va1")).toBe("pv1");
    expect(ground.calls).toEqual([unpublishOfPv1, unpublishOfPv1]);
  });

  it("owes nothing when it was never ours to detach, belongs to another attacher, or ended the normal way", () => {
    const ground = createHandlerGround();
    const parse = (raw: object) => parseVolumeAttachment(raw);
    const withoutFinalizer = parse(vaJson("va1"));
    const foreign = parse({ ...vanishedVa(), spec: { attacher: "other.csi", nodeName: "node1", source: { persistentVolumeName: "pv1" } } });
    // The watch's last state of a VA whose last finalizer we removed: still ours, but marked for deletion.
    const detachedNormally = parse(vaJson("va1", { metadata: { finalizers: [finalizer], deletionTimestamp: "2026-11-22T09:30:00Z" } }));
    expect([withoutFinalizer, foreign, detachedNormally].map((va) => ground.vanished.note(va))).toEqual([false, false, false]);
  });

  it("is taken over by a new VA of the same name for the same volume and node, which publishes it again", async () => {
    const ground = createHandlerGround({ vas: [vanishedVa()], pvs: [pvJson("pv1", { metadata: { finalizers: [finalizer] } })], csiNodes: [csiNode1] });
    const gone = ground.vanish("va1");
    ground.vanished.note(gone);
    ground.addVa(vaJson("va1", { metadata: { resourceVersion: "200" } }));
    await ground.sync("va1");
    ground.calls.length = 0;
    // Taken over: nothing is kept of the vanished VA, so a sync of the name once it is gone owes nothing.
    expect({ kept: ground.vanished.get("va1"), released: await ground.handler.syncVolumeAttachment("va1", undefined) }).toEqual({ kept: undefined, released: undefined });
    expect(ground.calls).toEqual([]);
  });

  it("is unpublished before a new VA of the same name that stands for another node is attached", async () => {
    const csiNode2 = { metadata: { name: "node2", resourceVersion: "1" }, spec: { drivers: [{ name: driverName, nodeID: "node2-id" }] } };
    const ground = createHandlerGround({ vas: [vanishedVa()], pvs: [pvJson("pv1", { metadata: { finalizers: [finalizer] } })], csiNodes: [csiNode1, csiNode2] });
    const gone = ground.vanish("va1");
    ground.vanished.note(gone);
    ground.addVa(vaJson("va1", { node: "node2", metadata: { resourceVersion: "200" } }));
    await ground.sync("va1");
    expect(ground.calls.filter((call) => "csi" in call)).toEqual([
      unpublishOfPv1,
      { ...publishOfPv1, request: { ...(publishOfPv1 as { request: object }).request, nodeId: "node2-id" } },
    ]);
  });
});

describe("PV finalizer", () => {
  const deletingPv = (extra: { annotations?: object; finalizers?: string[] } = {}) =>
    pvJson("pv1", { metadata: { deletionTimestamp: "2026-11-22T09:30:00Z", finalizers: extra.finalizers ?? ["kubernetes.io/pv-protection", finalizer] } });

  it("appends to a non-empty finalizer list and replaces an empty one after testing it", async () => {
    const appended = createHandlerGround({ vas: [vaJson("va1")], pvs: [pvJson("pv1", { metadata: { finalizers: ["kubernetes.io/pv-protection"] } })], csiNodes: [csiNode1] });
    await appended.sync("va1");
    const replaced = createHandlerGround({ vas: [vaJson("va1")], pvs: [pvJson("pv1", { metadata: { finalizers: [] } })], csiNodes: [csiNode1] });
    await replaced.sync("va1");
    expect([appended.calls[0], replaced.calls[0]]).toEqual([
      { api: "patchPersistentVolume", name: "pv1", patch: [{ op: "add", path: "/metadata/finalizers/-", value: finalizer }] },
      {
        api: "patchPersistentVolume",
        name: "pv1",
        patch: [
          { op: "test", path: "/metadata/finalizers", value: [] },
          { op: "replace", path: "/metadata/finalizers", value: [finalizer] },
        ],
      },
    ]);
  });

  it("keeps the finalizer of a deleted PV while a VA names it, and removes exactly ours once the last VA is gone", async () => {
    const va = vaJson("va1", { metadata: { finalizers: [finalizer] }, status: { attached: true } });
    const ground = createHandlerGround({ vas: [va], pvs: [deletingPv()] });
    await ground.handler.syncPersistentVolume(ground.pv("pv1"));
    const whileUsed = [...ground.calls];
    ground.vas.remove(ground.va("va1"));
    await ground.handler.syncPersistentVolume(ground.pv("pv1"));
    expect({ whileUsed, after: ground.calls }).toEqual({
      whileUsed: [],
      after: [removingOurPvFinalizerAt(1)],
    });
  });

  it("counts VAs of other attachers as users of the PV, as upstream does", async () => {
    const foreign = { ...vaJson("foreign"), spec: { attacher: "other.csi", nodeName: "node1", source: { persistentVolumeName: "pv1" } } };
    const ground = createHandlerGround({ vas: [foreign], pvs: [deletingPv()] });
    await ground.handler.syncPersistentVolume(ground.pv("pv1"));
    expect(ground.calls).toEqual([]);
  });

  it("asks for a sync only of PVs with our finalizer that are deleted or whose CSI migration was rolled back", () => {
    const inTree = (annotations?: object) =>
      ({
        metadata: { name: "p", finalizers: [finalizer], ...(annotations ? { annotations } : {}) },
        spec: { gcePersistentDisk: { pdName: "disk" } },
      }) as const;
    const needs = (raw: object) => pvNeedsSync(parsePersistentVolume(raw), driverName);
    expect({
      live: needs(pvJson("a", { metadata: { finalizers: [finalizer] } })),
      deleted: needs(deletingPv()),
      deletedWithoutOurs: needs(deletingPv({ finalizers: ["kubernetes.io/pv-protection"] })),
      inTreeMigratedToUs: needs(inTree({ "pv.kubernetes.io/migrated-to": driverName })),
      inTreeMigratedElsewhere: needs(inTree({ "pv.kubernetes.io/migrated-to": "pd.csi.storage.gke.io" })),
      inTreeNoAnnotation: needs(inTree()),
    }).toEqual({
      live: false,
      deleted: true,
      deletedWithoutOurs: false,
      inTreeMigratedToUs: false,
      inTreeMigratedElsewhere: true,
      inTreeNoAnnotation: true,
    });
  });

  it("removes our finalizer from a live in-tree PV once migration was rolled back and no VA uses it", async () => {
    const pv = { metadata: { name: "pv1", resourceVersion: "1", finalizers: [finalizer] }, spec: { awsElasticBlockStore: { volumeID: "vol-1" } } };
    const ground = createHandlerGround({ pvs: [pv] });
    await ground.handler.syncPersistentVolume(ground.pv("pv1"));
    expect(ground.calls).toEqual([
      {
        api: "patchPersistentVolume",
        name: "pv1",
        patch: [
          { op: "test", path: "/metadata/finalizers/0", value: finalizer },
          { op: "remove", path: "/metadata/finalizers/0" },
        ],
      },
    ]);
  });
});
