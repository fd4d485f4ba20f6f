import { describe, expect, it } from "bun:test";
import { AttachController } from "../../../src/controller/attach-controller";
import type { Handler } from "../../../src/controller/handler";
import type { PersistentVolume } from "../../../src/kube/objects/persistent-volume";
import { parseVolumeAttachment, type VolumeAttachment } from "../../../src/kube/objects/volume-attachment";
import { Store } from "../../../src/kube/store";
import { Logger } from "../../../src/log/logger";
import { WorkQueue } from "../../../src/queue/work-queue";
import { settle } from "../queue/settle";

function va(name: string): VolumeAttachment {
  return parseVolumeAttachment({
    metadata: { name, resourceVersion: "1" },
    spec: { attacher: "d", nodeName: "n", source: { persistentVolumeName: `pv-${name}` } },
  });
}

describe("attach controller shutdown", () => {
  it("lets the operation in flight finish, starts none of the queued ones, then returns", async () => {
    const started: string[] = [];
    let finishFirst = () => {};
    const handler: Handler = {
      syncVolumeAttachment: (name) => {
        started.push(name);
        return new Promise<undefined>((resolve) => (finishFirst = () => resolve(undefined)));
      },
      start: () => {},
    syncPersistentVolume: async () => {},
    };
    const vas = new Store<VolumeAttachment>();
    const controller = new AttachController({
      driverName: "d",
      handler,
      vas,
      pvs: new Store<PersistentVolume>(),
      vaQueue: new WorkQueue<string>({ name: "csi-attacher-va" }),
      pvQueue: new WorkQueue<string>({ name: "csi-attacher-pv" }),
      log: new Logger({ sink: () => {} }),
    });
    const stop = new AbortController();
    const running = controller.run(1, stop.signal);
    vas.upsert(va("in-flight"));
    await settle();
    vas.upsert(va("queued"));
    await settle();
    expect(started).toEqual(["in-flight"]);

    stop.abort();
    let returned = false;
    void running.then(() => (returned = true));
    await settle();
    expect(returned).toBe(false);
    finishFirst();
    await running;
    expect(started).toEqual(["in-flight"]);
  });
});
