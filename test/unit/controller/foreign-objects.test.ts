import { describe, expect, it } from "bun:test";
import { isOurPersistentVolume, slimPersistentVolume, slimVolumeAttachment } from "../../../src/controller/foreign-objects";
import type { PersistentVolume } from "../../../src/kube/objects/persistent-volume";
import type { VolumeAttachment } from "../../../src/kube/objects/volume-attachment";

const driver = "ebs.csi.aws.com";

function pv(spec: PersistentVolume["spec"], finalizers?: string[]): PersistentVolume {
  return { metadata: { name: "pv-1", resourceVersion: "7", ...(finalizers ? { finalizers } : {}), annotations: { a: "b" } }, spec };
}

describe("foreign objects", () => {
  it("counts a PV as ours by its CSI driver, its in-tree source's migration target, or our finalizer", () => {
    expect([
      isOurPersistentVolume(pv({ csi: { driver, volumeHandle: "v", readOnly: false, fsType: "" } }), driver),
      isOurPersistentVolume(pv({ awsElasticBlockStore: { volumeID: "vol-1" } }), driver),
      isOurPersistentVolume(pv({ csi: { driver: "other", volumeHandle: "v", readOnly: false, fsType: "" } }, ["external-attacher/ebs-csi-aws-com"]), driver),
      isOurPersistentVolume(pv({ csi: { driver: "other", volumeHandle: "v", readOnly: false, fsType: "" } }, ["kubernetes.io/pv-protection"]), driver),
      isOurPersistentVolume(pv({ gcePersistentDisk: { pdName: "d" } }), driver),
    ]).toEqual([true, true, true, false, false]);
  });

  it("keeps our PV whole and of a foreign one only name, resourceVersion, finalizers and deletionTimestamp", () => {
    const ours = pv({ csi: { driver, volumeHandle: "v", readOnly: false, fsType: "" } });
    expect(slimPersistentVolume(ours, driver)).toBe(ours);
    expect(slimPersistentVolume(pv({ csi: { driver: "other", volumeHandle: "v", readOnly: false, fsType: "" } }, ["kubernetes.io/pv-protection"]), driver)).toEqual({
      metadata: { name: "pv-1", resourceVersion: "7", finalizers: ["kubernetes.io/pv-protection"] },
      spec: {},
    });
  });

  it("keeps our VA whole and the name, attacher and PV name of another attacher's", () => {
    const va = (attacher: string): VolumeAttachment => ({
      metadata: { name: "va-1", resourceVersion: "9", finalizers: ["f"] },
      spec: { attacher, nodeName: "node-a", source: { persistentVolumeName: "pv-1" } },
      status: { attached: true, attachmentMetadata: { devicePath: "/dev/x" } },
    });
    const ours = va(driver);
    expect(slimVolumeAttachment(ours, driver)).toBe(ours);
    expect(slimVolumeAttachment(va("other"), driver)).toEqual({
      metadata: { name: "va-1", resourceVersion: "9" },
      spec: { attacher: "other", nodeName: "", source: { persistentVolumeName: "pv-1" } },
    });
  });
});
