import { describe, expect, it } from "bun:test";
import { AttachController } from "../../../src/controller/attach-controller";
import type { Handler } from "../../../src/controller/handler";
import { VanishedVolumeAttachments } from "../../../src/controller/vanished-volume-attachments";
import { parsePersistentVolume, type PersistentVolume } from "../../../src/kube/objects/persistent-volume";
import { parseVolumeAttachment, type VolumeAttachment } from "../../../src/kube/objects/volume-attachment";
import { Store } from "../../../src/kube/store";
import { Logger } from "../../../src/log/logger";
import { WorkQueue } from "../../../src/queue/work-queue";

/** Our finalizer for driver "d". */
const finalizer = "external-attacher/d";

function va(name: string, resourceVersion: string, status: object = { attached: false }, metadata: object = {}): VolumeAttachment {
  return parseVolumeAttachment({ metadata: { name, resourceVersion, ...metadata }, spec: { attacher: "d", nodeName: "n", source: { persistentVolumeName: `pv-${name}` } }, status });
}

function pv(name: string, resourceVersion = "1", metadata: object = {}): PersistentVolume {
  return parsePersistentVolume({ metadata: { name, resourceVersion, ...metadata } });
}

function ground() {
  const vas = new Store<VolumeAttachment>();
  const pvs = new Store<PersistentVolume>();
  const vaQueue = new WorkQueue<string>({ name: "csi-attacher-va" });
  const pvQueue = new WorkQueue<string>({ name: "csi-attacher-pv" });
  const handler: Handler = {
    syncVolumeAttachment: async () => undefined,
    start: () => {},
    syncPersistentVolume: async () => {},
  };
  const log = new Logger({ sink: () => {} });
  const vanished = new VanishedVolumeAttachments({ driverName: "d", log });
  new AttachController({ driverName: "d", handler, vas, pvs, vaQueue, pvQueue, vanished, log });
  const drain = async (queue: WorkQueue<string>) => {
    const names: string[] = [];
    while (queue.len() > 0) {
      const next = await queue.get();
      if (next.shutdown) break;
      names.push(next.item);
      queue.done(next.item);
    }
    return names;
  };
  return { vas, pvs, vaQueue, pvQueue, drain };
}

describe("attach controller routing", () => {
  it("queues added and changed VAs, not a change of attachError alone, and a deleted VA's PV", async () => {
    const { vas, vaQueue, pvQueue, drain } = ground();
    vas.upsert(va("a", "1"));
    const afterAdd = await drain(vaQueue);
    vas.upsert(va("a", "2", { attached: false, attachError: { message: "x" } }));
    const afterOwnError = await drain(vaQueue);
    vas.upsert(va("a", "3", { attached: true }));
    const afterChange = await drain(vaQueue);
    vas.remove(va("a", "3"));
    expect({ afterAdd, afterOwnError, afterChange, pvQueue: await drain(pvQueue) }).toEqual({
      afterAdd: ["a"],
      afterOwnError: [],
      afterChange: ["a"],
      pvQueue: ["pv-a"],
    });
  });

  it("hands a VA that vanished still carrying our finalizer to its PV's sync, and an inline one to its own name's, so its volume is released", async () => {
    const { vas, vaQueue, pvQueue, drain } = ground();
    const inline = (name: string) =>
      parseVolumeAttachment({ metadata: { name, resourceVersion: "1", finalizers: [finalizer] }, spec: { attacher: "d", nodeName: "n", source: { inlineVolumeSpec: { csi: { driver: "d", volumeHandle: "vol" } } } }, status: { attached: true } });
    vas.upsert(va("owed-a", "1", { attached: true }, { finalizers: [finalizer] }));
    vas.upsert(inline("owed-inline"));
    vas.upsert(va("b", "1"));
    await drain(vaQueue);
    vas.remove(va("owed-a", "1", { attached: true }, { finalizers: [finalizer] }));
    vas.remove(inline("owed-inline"));
    vas.remove(va("b", "1"));
    expect({ vaQueue: await drain(vaQueue), pvQueue: await drain(pvQueue) }).toEqual({ vaQueue: ["owed-inline"], pvQueue: ["pv-owed-a", "pv-b"] });
  });

  it("queues only the PV events that may need our finalizer removed (pvNeedsSync)", async () => {
    const { pvs, pvQueue, drain } = ground();
    pvs.upsert(pv("wanted-1", "1", { finalizers: [finalizer], deletionTimestamp: "2026-11-22T00:00:00Z" }));
    pvs.upsert(pv("other"));
    pvs.upsert(pv("other", "2", { finalizers: [finalizer] }));
    expect(await drain(pvQueue)).toEqual(["wanted-1"]);
  });

  it("re-delivers every cached VA and PV on resync, even a VA whose last change was its own error", async () => {
    const { vas, pvs, vaQueue, pvQueue, drain } = ground();
    vas.upsert(va("a", "1"));
    vas.upsert(va("b", "1", { attached: false, attachError: { message: "x" } }));
    pvs.upsert(pv("wanted-1", "1", { finalizers: [finalizer], deletionTimestamp: "2026-11-22T00:00:00Z" }));
    await drain(vaQueue);
    await drain(pvQueue);
    vas.resync();
    pvs.resync();
    expect({ vas: (await drain(vaQueue)).sort(), pvs: await drain(pvQueue) }).toEqual({ vas: ["a", "b"], pvs: ["wanted-1"] });
  });
});
