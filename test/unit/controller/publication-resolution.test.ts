import { describe, expect, it } from "bun:test";
import { listedVolumeHandle, resolvePublication, type VolumeResolution } from "../../../src/controller/publication-resolution";
import { isNotFound } from "../../../src/kube/errors";
import type { CsiNode } from "../../../src/kube/objects/csi-node";
import { parsePersistentVolume, type PersistentVolume } from "../../../src/kube/objects/persistent-volume";
import { parseVolumeAttachment, type VolumeAttachment } from "../../../src/kube/objects/volume-attachment";
import { Store } from "../../../src/kube/store";
import { errorMessage } from "../../../src/util/error-message";

const driver = "ours.csi.test";

function vaWithSource(source: Record<string, unknown>): VolumeAttachment {
  return parseVolumeAttachment({ metadata: { name: "va-1", resourceVersion: "1" }, spec: { attacher: driver, nodeName: "node-a", source } });
}

function pv(name: string, spec: Record<string, unknown>, labels?: Record<string, string>): PersistentVolume {
  return parsePersistentVolume({ metadata: { name, resourceVersion: "1", ...(labels ? { labels } : {}) }, spec });
}

function storeOf(...pvs: PersistentVolume[]): Store<PersistentVolume> {
  const store = new Store<PersistentVolume>();
  for (const one of pvs) store.upsert(one);
  return store;
}

/** volumeOf is the volume half of resolvePublication, the one entry attach, detach, the reconciler and the doctor go through. */
function volumeOf(va: VolumeAttachment, pvs: Store<PersistentVolume>): VolumeResolution {
  return resolvePublication(va, { pvs, csiNodes: new Store<CsiNode>(), driverName: driver }, { remembered: false }).volume;
}

/** A failure as the callers see it: the step, and the error's text and kind. */
function failureOf(resolution: VolumeResolution) {
  if (resolution.ok) return { ok: true };
  return { ok: false, step: resolution.step, message: errorMessage(resolution.error), notFound: isNotFound(resolution.error) };
}

const gcePv = pv("pv-gce", { gcePersistentDisk: { pdName: "disk-1", fsType: "ext4" }, accessModes: ["ReadWriteOnce"] }, { "topology.kubernetes.io/zone": "us-east1-b" });
const gceTranslated = {
  csi: {
    driver: "pd.csi.storage.gke.io",
    volumeHandle: "projects/UNSPECIFIED/zones/us-east1-b/disks/disk-1",
    readOnly: false,
    fsType: "ext4",
    volumeAttributes: { partition: "" },
  },
  accessModes: ["ReadWriteOnce"],
};

describe("resolving a VA's volume", () => {
  it("is the CSI PV's own spec and CSI source, not migrated", () => {
    const csiPv = pv("pv-1", { csi: { driver, volumeHandle: "vol-1" }, accessModes: ["ReadWriteOnce"] });
    expect(volumeOf(vaWithSource({ persistentVolumeName: "pv-1" }), storeOf(csiPv))).toEqual({
      ok: true,
      volume: { spec: csiPv.spec, csi: { driver, volumeHandle: "vol-1", readOnly: false, fsType: "" }, origin: "pv", migrated: false },
      pv: csiPv,
    });
  });

  it("is the inline spec and its CSI source, of inline origin and not marked migrated (each caller decides what inline counts as)", () => {
    const va = vaWithSource({ inlineVolumeSpec: { csi: { driver, volumeHandle: "vol-inline" } } });
    expect(volumeOf(va, storeOf())).toEqual({
      ok: true,
      volume: { spec: { csi: { driver, volumeHandle: "vol-inline", readOnly: false, fsType: "" } }, csi: { driver, volumeHandle: "vol-inline", readOnly: false, fsType: "" }, origin: "inline", migrated: false },
    });
  });

  it("is an in-tree PV's spec translated to CSI, marked migrated", () => {
    expect(volumeOf(vaWithSource({ persistentVolumeName: "pv-gce" }), storeOf(gcePv))).toEqual({
      ok: true,
      volume: { spec: gceTranslated, csi: gceTranslated.csi, origin: "pv", migrated: true },
      pv: gcePv,
    });
  });

  it("fails at the PV spec with the lister's NotFound when the PV is not in the cache", () => {
    expect(failureOf(volumeOf(vaWithSource({ persistentVolumeName: "pv-missing" }), storeOf()))).toEqual({
      ok: false,
      step: "pv-spec",
      message: 'persistentvolume "pv-missing" not found',
      notFound: true,
    });
  });

  it("fails at the CSI source, in upstream's words, when the PV is neither CSI nor migratable", () => {
    const nfsPv = pv("pv-nfs", { nfs: { server: "nfs.example", path: "/export" }, accessModes: ["ReadWriteMany"] });
    expect(failureOf(volumeOf(vaWithSource({ persistentVolumeName: "pv-nfs" }), storeOf(nfsPv)))).toEqual({
      ok: false,
      step: "csi-source",
      message: "pv spec contained non-csi source that was not migrated",
      notFound: false,
    });
  });

  it("fails at the PV spec when the VA names both a PV and an inline spec", () => {
    const va = vaWithSource({ persistentVolumeName: "pv-1", inlineVolumeSpec: { csi: { driver, volumeHandle: "vol-inline" } } });
    expect(failureOf(volumeOf(va, storeOf()))).toEqual({
      ok: false,
      step: "pv-spec",
      message: "both InlineCSIVolumeSource and PersistentVolumeName specified in VA source",
      notFound: false,
    });
  });

  it("fails at the PV spec when the in-tree PV cannot be translated", () => {
    const badPv = pv("pv-bad", { awsElasticBlockStore: { fsType: "ext4" } });
    expect(failureOf(volumeOf(vaWithSource({ persistentVolumeName: "pv-bad" }), storeOf(badPv)))).toEqual({
      ok: false,
      step: "pv-spec",
      message: 'failed to translate in tree pv to CSI: PersistentVolume "pv-bad": spec.awsElasticBlockStore.volumeID: is required',
      notFound: false,
    });
  });
});

describe("resolving an in-tree PV (CSI migration)", () => {
  it("translates with the PV's zone label, and keeps only the access mode the CSI driver accepts", () => {
    const pvGce = pv("pv-gce-2", { gcePersistentDisk: { pdName: "disk-1", fsType: "ext4" }, accessModes: ["ReadWriteOnce", "ReadOnlyMany"] }, { "topology.kubernetes.io/zone": "us-east1-b" });
    const resolution = volumeOf(vaWithSource({ persistentVolumeName: "pv-gce-2" }), storeOf(pvGce));
    expect(resolution.ok && { spec: resolution.volume.spec, migrated: resolution.volume.migrated }).toEqual({ spec: gceTranslated, migrated: true });
  });
});

describe("what a resolution reports of the PV it found", () => {
  it("carries the PV it found even when the translation then fails, so attach can put our finalizer on it first", () => {
    const badPv = pv("pv-bad", { awsElasticBlockStore: { fsType: "ext4" } });
    const resolution = volumeOf(vaWithSource({ persistentVolumeName: "pv-bad" }), storeOf(badPv));
    expect({ ok: resolution.ok, pv: resolution.pv }).toEqual({ ok: false, pv: badPv });
  });

  it("carries no PV when the VA names none, or names one the cache lacks", () => {
    const inline = volumeOf(vaWithSource({ inlineVolumeSpec: { csi: { driver, volumeHandle: "vol-inline" } } }), storeOf());
    const missing = volumeOf(vaWithSource({ persistentVolumeName: "pv-missing" }), storeOf());
    expect([inline.pv, missing.pv]).toEqual([undefined, undefined]);
  });

  it("is the in-tree PV's translation, with its zone label, as the spec of the PV it carries", () => {
    expect(volumeOf(vaWithSource({ persistentVolumeName: "pv-gce" }), storeOf(gcePv))).toEqual({
      ok: true,
      volume: { spec: gceTranslated, csi: gceTranslated.csi, origin: "pv", migrated: true },
      pv: gcePv,
    });
  });
});

describe("the volume handle as the driver lists it (reconciler and doctor)", () => {
  const gceNodeId = "projects/my-project/zones/us-east1-b/instances/node-a";

  it("is a CSI PV's own handle", () => {
    const csiPv = pv("pv-1", { csi: { driver, volumeHandle: "vol-1" } });
    const resolution = volumeOf(vaWithSource({ persistentVolumeName: "pv-1" }), storeOf(csiPv));
    expect(resolution.ok && listedVolumeHandle(resolution.volume, "node-a-id")).toBe("vol-1");
  });

  it("is a migrated PV's handle repaired with the node ID", () => {
    const resolution = volumeOf(vaWithSource({ persistentVolumeName: "pv-gce" }), storeOf(gcePv));
    expect(resolution.ok && listedVolumeHandle(resolution.volume, gceNodeId)).toBe("projects/my-project/zones/us-east1-b/disks/disk-1");
  });

  it("is an inline spec's handle repaired too: the A/D controller puts one on a VA only for a migrated inline volume", () => {
    const inline = { csi: { driver: "pd.csi.storage.gke.io", volumeHandle: "projects/UNSPECIFIED/zones/us-east1-b/disks/disk-2" } };
    const resolution = volumeOf(vaWithSource({ inlineVolumeSpec: inline }), storeOf());
    expect(resolution.ok && listedVolumeHandle(resolution.volume, gceNodeId)).toBe("projects/my-project/zones/us-east1-b/disks/disk-2");
  });
});
