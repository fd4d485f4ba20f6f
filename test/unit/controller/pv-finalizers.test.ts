import { describe, expect, it } from "bun:test";
import { parsePersistentVolume } from "../../../src/kube/objects/persistent-volume";
import { pvNeedsSync } from "../../../src/controller/pv-needs-sync";
import { createHandlerGround, driverName, finalizer } from "./support/handler-ground";
import { vaJson, pvJson, csiNode1, removingOurPvFinalizerAt } from "./support/rule-objects";

/**
 * Our PV finalizer: on before a publish, off once no VA needs the PV. The
 * same rules run end to end in test/e2e/pv-finalizers.
 */

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
