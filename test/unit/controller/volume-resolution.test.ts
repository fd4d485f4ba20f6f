import { describe, expect, it } from "bun:test";
import { resolveFoundVolume, resolveVolume, type VolumeResolution } from "../../../src/controller/volume-resolution";
import { isNotFound } from "../../../src/kube/errors";
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
    expect(resolveVolume(vaWithSource({ persistentVolumeName: "pv-1" }), storeOf(csiPv))).toEqual({
      ok: true,
      volume: { spec: csiPv.spec, csi: { driver, volumeHandle: "vol-1", readOnly: false, fsType: "" }, origin: "pv", migrated: false },
    });
  });

  it("is the inline spec and its CSI source, of inline origin and not marked migrated (each caller decides what inline counts as)", () => {
    const va = vaWithSource({ inlineVolumeSpec: { csi: { driver, volumeHandle: "vol-inline" } } });
    expect(resolveVolume(va, storeOf())).toEqual({
      ok: true,
      volume: { spec: { csi: { driver, volumeHandle: "vol-inline", readOnly: false, fsType: "" } }, csi: { driver, volumeHandle: "vol-inline", readOnly: false, fsType: "" }, origin: "inline", migrated: false },
    });
  });

  it("is an in-tree PV's spec translated to CSI, marked migrated", () => {
    expect(resolveVolume(vaWithSource({ persistentVolumeName: "pv-gce" }), storeOf(gcePv))).toEqual({
      ok: true,
      volume: { spec: gceTranslated, csi: gceTranslated.csi, origin: "pv", migrated: true },
    });
  });

  it("fails at the PV spec with the lister's NotFound when the PV is not in the cache", () => {
    expect(failureOf(resolveVolume(vaWithSource({ persistentVolumeName: "pv-missing" }), storeOf()))).toEqual({
      ok: false,
      step: "pv-spec",
      message: 'persistentvolume "pv-missing" not found',
      notFound: true,
    });
  });

  it("fails at the CSI source, in upstream's words, when the PV is neither CSI nor migratable", () => {
    const nfsPv = pv("pv-nfs", { nfs: { server: "nfs.example", path: "/export" }, accessModes: ["ReadWriteMany"] });
    expect(failureOf(resolveVolume(vaWithSource({ persistentVolumeName: "pv-nfs" }), storeOf(nfsPv)))).toEqual({
      ok: false,
      step: "csi-source",
      message: "pv spec contained non-csi source that was not migrated",
      notFound: false,
    });
  });

  it("fails at the PV spec when the VA names both a PV and an inline spec", () => {
    const va = vaWithSource({ persistentVolumeName: "pv-1", inlineVolumeSpec: { csi: { driver, volumeHandle: "vol-inline" } } });
    expect(failureOf(resolveVolume(va, storeOf()))).toEqual({
      ok: false,
      step: "pv-spec",
      message: "both InlineCSIVolumeSource and PersistentVolumeName specified in VA source",
      notFound: false,
    });
  });

  it("fails at the PV spec when the in-tree PV cannot be translated", () => {
    const badPv = pv("pv-bad", { awsElasticBlockStore: { fsType: "ext4" } });
    expect(failureOf(resolveVolume(vaWithSource({ persistentVolumeName: "pv-bad" }), storeOf(badPv)))).toEqual({
      ok: false,
      step: "pv-spec",
      message: 'failed to translate in tree pv to CSI: PersistentVolume "pv-bad": spec.awsElasticBlockStore.volumeID: is required',
      notFound: false,
    });
  });
});

describe("resolving a found volume (attach, after the PV finalizer)", () => {
  it("translates the in-tree PV it is handed (as the finalizer patch returned it), marked migrated", () => {
    expect(resolveFoundVolume({ kind: "pv", pv: gcePv })).toEqual({
      ok: true,
      volume: { spec: gceTranslated, csi: gceTranslated.csi, origin: "pv", migrated: true },
    });
  });
});
