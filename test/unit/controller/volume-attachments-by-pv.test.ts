import { describe, expect, it } from "bun:test";
import { VolumeAttachmentsByPv } from "../../../src/controller/volume-attachments-by-pv";
import { parseVolumeAttachment, type VolumeAttachment } from "../../../src/kube/objects/volume-attachment";
import { Store } from "../../../src/kube/store";

function va(name: string, source: object, resourceVersion = "1"): VolumeAttachment {
  return parseVolumeAttachment({ metadata: { name, resourceVersion }, spec: { attacher: "d", nodeName: "n", source } });
}

describe("VAs by PV", () => {
  it("follows the store: VAs present before it was built, added, moved and deleted", () => {
    const vas = new Store<VolumeAttachment>();
    vas.upsert(va("early", { persistentVolumeName: "pv1" }));
    const index = new VolumeAttachmentsByPv(vas);
    vas.upsert(va("late", { persistentVolumeName: "pv1" }));
    vas.upsert(va("inline", { inlineVolumeSpec: { csi: { driver: "d", volumeHandle: "h" } } }));
    vas.upsert(va("moved", { persistentVolumeName: "pv1" }));
    vas.upsert(va("moved", { persistentVolumeName: "pv2" }, "2"));
    const before = { pv1: index.vasUsing("pv1").sort(), pv2: index.vasUsing("pv2") };
    vas.remove(va("early", { persistentVolumeName: "pv1" }));
    const relist = vas.startReplace();
    relist.add(va("moved", { persistentVolumeName: "pv2" }, "2"));
    relist.finish();
    expect({ before, after: { pv1: index.vasUsing("pv1"), pv2: index.vasUsing("pv2") } }).toEqual({
      before: { pv1: ["early", "late"], pv2: ["moved"] },
      after: { pv1: [], pv2: ["moved"] },
    });
  });
});

describe("VAs by PV with several users", () => {
  it("lists every VA naming a PV as users come and go, down to none", () => {
    const vas = new Store<VolumeAttachment>();
    const index = new VolumeAttachmentsByPv(vas);
    const seen: string[][] = [];
    const look = () => seen.push(index.vasUsing("pv1").sort());
    vas.upsert(va("a", { persistentVolumeName: "pv1" }));
    look();
    vas.upsert(va("b", { persistentVolumeName: "pv1" }));
    vas.upsert(va("c", { persistentVolumeName: "pv1" }));
    look();
    vas.remove(va("a", { persistentVolumeName: "pv1" }));
    look();
    vas.upsert(va("b", { persistentVolumeName: "pv2" }, "2"));
    look();
    vas.upsert(va("c", { persistentVolumeName: "pv1" }, "3"));
    look();
    vas.upsert(va("d", { persistentVolumeName: "pv1" }));
    look();
    vas.remove(va("c", { persistentVolumeName: "pv1" }));
    vas.remove(va("d", { persistentVolumeName: "pv1" }));
    look();
    expect({ seen, pv2: index.vasUsing("pv2") }).toEqual({ seen: [["a"], ["a", "b", "c"], ["b", "c"], ["c"], ["c"], ["c", "d"], []], pv2: ["b"] });
  });
});
