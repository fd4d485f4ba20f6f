import { describe, expect, it } from "bun:test";
import { vaQueueLanes } from "../../../src/controller/va-lanes";
import { parseVolumeAttachment, type VolumeAttachment } from "../../../src/kube/objects/volume-attachment";
import { Store } from "../../../src/kube/store";
import { WorkQueue } from "../../../src/queue/work-queue";

function va(name: string, deleting: boolean): VolumeAttachment {
  return parseVolumeAttachment({
    metadata: { name, resourceVersion: "1", ...(deleting ? { deletionTimestamp: "2026-11-22T12:00:00Z" } : {}) },
    spec: { attacher: "d", nodeName: "n", source: { persistentVolumeName: `pv-${name}` } },
  });
}

describe("VA queue lanes", () => {
  it("hand a new attach to the next free worker however many detaches wait, and keep detaches moving", async () => {
    const vas = new Store<VolumeAttachment>();
    const queue = new WorkQueue<string>({ name: "csi-attacher-va", lanes: vaQueueLanes(vas) });
    for (let i = 0; i < 50; i++) {
      vas.upsert(va(`detach-${i}`, true));
      queue.add(`detach-${i}`);
    }
    vas.upsert(va("attach-new", false));
    queue.add("attach-new");
    // A name the cache no longer holds only needs a no-op sync: it waits with the detaches.
    queue.add("gone");
    const order: string[] = [];
    for (let i = 0; i < 4; i++) {
      const next = await queue.get();
      if (!next.shutdown) order.push(next.item);
    }
    expect(order).toEqual(["attach-new", "detach-0", "detach-1", "detach-2"]);
  });
});
