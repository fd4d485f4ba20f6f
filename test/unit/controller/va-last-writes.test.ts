import { describe, expect, it } from "bun:test";
import { LastVolumeAttachmentWrites } from "../../../src/controller/va-last-writes";
import { parseVolumeAttachment, type VolumeAttachment } from "../../../src/kube/objects/volume-attachment";
import { Store } from "../../../src/kube/store";

function va(name: string, resourceVersion: string, attached = false): VolumeAttachment {
  return parseVolumeAttachment({
    metadata: { name, resourceVersion },
    spec: { attacher: "d", nodeName: "n", source: { persistentVolumeName: `pv-${name}` } },
    status: { attached },
  });
}

function storeWith(...objects: VolumeAttachment[]): Store<VolumeAttachment> {
  const store = new Store<VolumeAttachment>();
  for (const object of objects) store.upsert(object);
  return store;
}

describe("last VA writes", () => {
  it("keeps nothing for a write the cache already shows, as every integer-versioned write applied to the cache", () => {
    const vas = storeWith(va("a", "1"));
    const writes = new LastVolumeAttachmentWrites(vas);
    vas.applyOwnWrite(va("a", "2", true));
    writes.record(va("a", "2", true));
    expect(writes.versionOf("a")).toBeUndefined();
  });

  it("keeps an opaque version the cache does not show until the watch delivers exactly that version", () => {
    const vas = storeWith(va("a", "x1"));
    const writes = new LastVolumeAttachmentWrites(vas);
    // An opaque version is not applied to the cache: it cannot be ordered.
    vas.applyOwnWrite(va("a", "x2", true));
    writes.record(va("a", "x2", true));
    const seen = [writes.versionOf("a")];
    vas.upsert(va("a", "x2", true));
    seen.push(writes.versionOf("a"));
    expect(seen).toEqual(["x2", undefined]);
  });

  it("keeps nothing for a VA the cache no longer holds, and drops what it kept when the VA is deleted", () => {
    const vas = storeWith(va("kept", "x1"));
    const writes = new LastVolumeAttachmentWrites(vas);
    writes.record(va("gone", "x5"));
    writes.record(va("kept", "x2"));
    const before = [writes.versionOf("gone"), writes.versionOf("kept")];
    vas.remove(va("kept", "x1"));
    expect({ before, after: writes.versionOf("kept") }).toEqual({ before: [undefined, "x2"], after: undefined });
  });

  it("keeps the version of the last write of several", () => {
    const vas = storeWith(va("a", "x1"));
    const writes = new LastVolumeAttachmentWrites(vas);
    writes.record(va("a", "x2"));
    writes.record(va("a", "x3", true));
    // The watch delivering the first write leaves the second in flight.
    vas.upsert(va("a", "x2"));
    expect(writes.versionOf("a")).toBe("x3");
  });
});
