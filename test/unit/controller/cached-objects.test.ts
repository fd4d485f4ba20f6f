import { describe, expect, it } from "bun:test";
import { cachedObjectParsers } from "../../../src/controller/cached-objects";
import { parsePersistentVolume } from "../../../src/kube/objects/persistent-volume";
import { parseVolumeAttachment } from "../../../src/kube/objects/volume-attachment";

const driver = "ebs.csi.aws.com";
const ourFinalizer = "external-attacher/ebs-csi-aws-com";

function rawPv(name: string, spec: object, finalizers?: string[]): object {
  return {
    apiVersion: "v1",
    kind: "PersistentVolume",
    metadata: { name, uid: `uid-${name}`, resourceVersion: "12", labels: { zone: "a" }, ...(finalizers ? { finalizers } : {}) },
    spec: { capacity: { storage: "1Gi" }, accessModes: ["ReadWriteOnce"], persistentVolumeReclaimPolicy: "Retain", ...spec },
  };
}

function rawVa(name: string, attacher: string, nodeName: string): object {
  return {
    metadata: { name, uid: `uid-${name}`, resourceVersion: "30", finalizers: [ourFinalizer], annotations: { "csi.alpha.kubernetes.io/node-id": `${nodeName}-id` } },
    spec: { attacher, nodeName, source: { persistentVolumeName: `pv-${name}` } },
    status: { attached: true },
  };
}

describe("cached objects: what the parsers keep", () => {
  it("stores ours, in-tree ours and finalizer-held PVs as fully parsed, and a stub of foreign ones", () => {
    const parse = cachedObjectParsers(driver).persistentVolume;
    const raws = [
      rawPv("ours", { csi: { driver, volumeHandle: "vol-1", fsType: "ext4" } }, ["kubernetes.io/pv-protection", ourFinalizer]),
      rawPv("foreign", { csi: { driver: "other", volumeHandle: "vol-2" } }, ["kubernetes.io/pv-protection"]),
      rawPv("foreign-deleted", { csi: { driver: "other", volumeHandle: "vol-3" } }),
      rawPv("held", { csi: { driver: "other", volumeHandle: "vol-4" } }, [ourFinalizer]),
      rawPv("in-tree-ours", { awsElasticBlockStore: { volumeID: "vol-5" } }),
      rawPv("in-tree-foreign", { gcePersistentDisk: { pdName: "disk" } }),
      rawPv("no-spec", {}),
    ];
    (raws[2] as { metadata: { deletionTimestamp?: string } }).metadata.deletionTimestamp = "2026-11-22T10:00:00Z";
    const whole = (index: number) => parsePersistentVolume(raws[index]);
    expect(raws.map(parse)).toEqual([
      whole(0),
      { metadata: { name: "foreign", resourceVersion: "12", finalizers: ["kubernetes.io/pv-protection"] }, spec: {} },
      { metadata: { name: "foreign-deleted", resourceVersion: "12", deletionTimestamp: "2026-11-22T10:00:00Z" }, spec: {} },
      whole(3),
      whole(4),
      { metadata: { name: "in-tree-foreign", resourceVersion: "12" }, spec: {} },
      { metadata: { name: "no-spec", resourceVersion: "12" }, spec: {} },
    ]);
  });

  it("shares the finalizer list, access modes and driver name between our PVs and foreign stubs", () => {
    const parse = cachedObjectParsers(driver).persistentVolume;
    const [a, b] = ["a", "b"].map((name) => parse(rawPv(name, { csi: { driver, volumeHandle: name } }, ["kubernetes.io/pv-protection", ourFinalizer])));
    const [c, d] = ["c", "d"].map((name) => parse(rawPv(name, { csi: { driver: "other", volumeHandle: name } }, ["kubernetes.io/pv-protection"])));
    expect([a?.metadata.finalizers === b?.metadata.finalizers, a?.spec.accessModes === b?.spec.accessModes, a?.spec.csi?.driver === driver, c?.metadata.finalizers === d?.metadata.finalizers]).toEqual([true, true, true, true]);
  });

  it("stores our VAs as parsed, sharing finalizers, node-ID annotations and node names between them", () => {
    const parse = cachedObjectParsers(driver).volumeAttachment;
    const raws = [rawVa("va-1", driver, "node-a"), rawVa("va-2", driver, "node-a"), rawVa("va-3", "other", "node-a")];
    const stored = raws.map(parse);
    const [one, two] = stored;
    expect({
      stored,
      shared: [one?.metadata.finalizers === two?.metadata.finalizers, one?.metadata.annotations === two?.metadata.annotations],
    }).toEqual({
      stored: [
        parseVolumeAttachment(raws[0]),
        parseVolumeAttachment(raws[1]),
        { metadata: { name: "va-3", resourceVersion: "30" }, spec: { attacher: "other", nodeName: "", source: { persistentVolumeName: "pv-va-3" } } },
      ],
      shared: [true, true],
    });
  });

  it("refuses a malformed foreign PV with the object and field named", () => {
    const parse = cachedObjectParsers(driver).persistentVolume;
    expect(() => parse({ metadata: { name: "bad", finalizers: "not-a-list" }, spec: { csi: { driver: "other", volumeHandle: "v" } } })).toThrow('PersistentVolume "bad" is malformed: metadata.finalizers');
  });
});

describe("cached objects: what is kept of another driver's objects", () => {
  const parse = cachedObjectParsers(driver);
  /** keptWhole: the cache keeps the PV as the full parse has it, so it counts as ours. */
  const keptWhole = (raw: object) => Bun.deepEquals(parse.persistentVolume(raw), parsePersistentVolume(raw));

  it("counts a PV as ours by its CSI driver, its in-tree source's migration target, or our finalizer", () => {
    expect([
      keptWhole(rawPv("pv-1", { csi: { driver, volumeHandle: "v" } })),
      keptWhole(rawPv("pv-1", { awsElasticBlockStore: { volumeID: "vol-1" } })),
      keptWhole(rawPv("pv-1", { csi: { driver: "other", volumeHandle: "v" } }, [ourFinalizer])),
      keptWhole(rawPv("pv-1", { csi: { driver: "other", volumeHandle: "v" } }, ["kubernetes.io/pv-protection"])),
      keptWhole(rawPv("pv-1", { gcePersistentDisk: { pdName: "d" } })),
    ]).toEqual([true, true, true, false, false]);
  });

  it("keeps of a foreign PV only name, resourceVersion, finalizers and deletionTimestamp", () => {
    const raw = rawPv("pv-1", { csi: { driver: "other", volumeHandle: "v" } }, ["kubernetes.io/pv-protection"]);
    expect(parse.persistentVolume(raw)).toEqual({
      metadata: { name: "pv-1", resourceVersion: "12", finalizers: ["kubernetes.io/pv-protection"] },
      spec: {},
    });
  });

  it("keeps our VA whole and the name, attacher and PV name of another attacher's", () => {
    const raw = (attacher: string) => ({
      metadata: { name: "va-1", resourceVersion: "9", finalizers: ["f"] },
      spec: { attacher, nodeName: "node-a", source: { persistentVolumeName: "pv-1" } },
      status: { attached: true, attachmentMetadata: { devicePath: "/dev/x" } },
    });
    expect([parse.volumeAttachment(raw(driver)), parse.volumeAttachment(raw("other"))]).toEqual([
      parseVolumeAttachment(raw(driver)),
      { metadata: { name: "va-1", resourceVersion: "9" }, spec: { attacher: "other", nodeName: "", source: { persistentVolumeName: "pv-1" } } },
    ]);
  });
});

describe("cached objects: CSINodes", () => {
  it("keeps only our driver's entry of a CSINode, and its name and resourceVersion", () => {
    const parse = cachedObjectParsers(driver).csiNode;
    const raw = {
      metadata: { name: "node-a", uid: "u", resourceVersion: "5", labels: { zone: "a" } },
      spec: { drivers: [{ name: "other", nodeID: "x" }, { name: driver, nodeID: "i-123", topologyKeys: ["zone"] }] },
    };
    expect(parse(raw)).toEqual({ metadata: { name: "node-a", resourceVersion: "5" }, spec: { drivers: [{ name: driver, nodeID: "i-123" }] } });
  });
});
