import { describe, expect, it } from "bun:test";
import { AttacherApi } from "../../../src/controller/attacher-api";
import { cachedObjectParsers } from "../../../src/controller/cached-objects";
import type { PatchType } from "../../../src/kube/http-client";
import type { PersistentVolume } from "../../../src/kube/objects/persistent-volume";
import type { VolumeAttachment } from "../../../src/kube/objects/volume-attachment";
import { Store } from "../../../src/kube/store";

const driver = "unit.csi.test";

function rawVa(name: string, resourceVersion = "10"): object {
  return {
    metadata: { name, resourceVersion, finalizers: ["external-attacher/unit-csi-test"] },
    spec: { attacher: driver, nodeName: "node-a", source: { persistentVolumeName: `pv-${name}` } },
    status: { attached: true },
  };
}

/** An API whose answers to our writes are given, over the stores and parsers of one attacher. */
function apiAnswering(answers: Record<string, unknown>) {
  const vas = new Store<VolumeAttachment>();
  const pvs = new Store<PersistentVolume>();
  const parse = cachedObjectParsers(driver);
  const client = {
    async get<T>(path: string): Promise<T> {
      return answers[path] as T;
    },
    async patch<T>(path: string, _type: PatchType, _patch: unknown): Promise<T> {
      return answers[path] as T;
    },
  };
  return { api: new AttacherApi(client, { vas, pvs, parse }), vas, pvs, parse };
}

describe("attacher API", () => {
  it("caches the answer to our own VA write as the watch would deliver it, sharing values with the watched VAs", async () => {
    const { api, vas, parse } = apiAnswering({ "/apis/storage.k8s.io/v1/volumeattachments/va-2": rawVa("va-2") });
    const watched = parse.volumeAttachment(rawVa("va-1"));
    vas.upsert(parse.volumeAttachment(rawVa("va-2", "9")));
    const written = await api.patchVolumeAttachment("va-2", { metadata: {} });
    expect({
      cached: vas.get("va-2") === written,
      sharedFinalizers: written.metadata.finalizers === watched.metadata.finalizers,
      sharedNode: written.spec.nodeName === watched.spec.nodeName,
    }).toEqual({ cached: true, sharedFinalizers: true, sharedNode: true });
  });

  it("remembers the answer to every VA write the cache cannot show yet, for the reconciler to tell a write in flight", async () => {
    // An API server whose resourceVersions are opaque: the answers cannot be ordered against the cache.
    const { api, vas, parse } = apiAnswering({
      "/apis/storage.k8s.io/v1/volumeattachments/va-3": rawVa("va-3", "b7"),
      "/apis/storage.k8s.io/v1/volumeattachments/va-3/status": rawVa("va-3", "c9"),
    });
    vas.upsert(parse.volumeAttachment(rawVa("va-3", "a3")));
    await api.patchVolumeAttachment("va-3", { metadata: {} });
    const afterFirst = vas.unobservedOwnWrite("va-3");
    await api.patchVolumeAttachment("va-3", { status: {} }, "status");
    expect({ cached: vas.get("va-3")?.metadata.resourceVersion, afterFirst, afterSecond: vas.unobservedOwnWrite("va-3") }).toEqual({ cached: "a3", afterFirst: "b7", afterSecond: "c9" });
  });

  it("answers the watched VA itself when the watch delivered our write's version before the answer came", async () => {
    const { api, vas, parse } = apiAnswering({ "/apis/storage.k8s.io/v1/volumeattachments/va-4": rawVa("va-4", "12") });
    vas.upsert(parse.volumeAttachment(rawVa("va-4", "12")));
    const watched = vas.get("va-4");
    const written = await api.patchVolumeAttachment("va-4", { metadata: {} });
    expect({ same: written === watched, cached: vas.get("va-4") === watched, unobserved: vas.unobservedOwnWrite("va-4") }).toEqual({ same: true, cached: true, unobserved: undefined });
  });

  it("still names what is wrong with a malformed answer to our write", async () => {
    const { api, vas, parse } = apiAnswering({ "/apis/storage.k8s.io/v1/volumeattachments/va-5": { metadata: { name: "va-5", resourceVersion: "13" }, spec: { attacher: driver } } });
    vas.upsert(parse.volumeAttachment(rawVa("va-5", "12")));
    await expect(api.patchVolumeAttachment("va-5", { metadata: {} })).rejects.toThrow(/VolumeAttachment.*va-5.*spec\.nodeName/);
  });

  it("caches a foreign PV our finalizer just left as the watch's stub, not whole", async () => {
    const raw = { metadata: { name: "pv-x", resourceVersion: "11", finalizers: ["kubernetes.io/pv-protection"] }, spec: { csi: { driver: "other.csi", volumeHandle: "v" } } };
    const { api, pvs, parse } = apiAnswering({ "/api/v1/persistentvolumes/pv-x": raw });
    pvs.upsert(parse.persistentVolume({ ...raw, metadata: { ...raw.metadata, resourceVersion: "10", finalizers: ["kubernetes.io/pv-protection", "external-attacher/unit-csi-test"] } }));
    await api.patchPersistentVolume("pv-x", [{ op: "remove", path: "/metadata/finalizers/1" }]);
    expect(pvs.get("pv-x")).toEqual({ metadata: { name: "pv-x", resourceVersion: "11", finalizers: ["kubernetes.io/pv-protection"] }, spec: {} });
  });
});
