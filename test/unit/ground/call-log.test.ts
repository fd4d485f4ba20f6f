import { describe, expect, it } from "bun:test";
import { CallLog } from "../../ground/fake-csi-driver/call-log";
import { VolumeTable } from "../../ground/fake-csi-driver/volume-table";

describe("fake driver call log", () => {
  it("keeps at most its limit of records, dropping the oldest, and still finishes recent calls", () => {
    const log = new CallLog();
    const open = Array.from({ length: 1000 }, () => log.begin("ControllerPublishVolume", {}, 100));
    expect(log.list().length).toBeLessThanOrEqual(100);
    const newest = open[open.length - 1];
    if (newest === undefined) throw new Error("no call opened");
    expect(log.finish(newest, "OK", null)?.code).toBe("OK");
    expect(log.list().at(-1)?.seq).toBe(newest.seq);
    // Dropped from the log: finishing it is a no-op, as for a cleared call.
    const oldest = open[0];
    if (oldest === undefined) throw new Error("no call opened");
    expect(log.finish(oldest, "OK", null)).toBeUndefined();
  });

  it("keeps every record without a limit", () => {
    const log = new CallLog();
    for (let i = 0; i < 1000; i++) log.begin("ListVolumes", {});
    expect(log.list().length).toBe(1000);
  });
});

describe("fake driver volume table", () => {
  it("pages through every volume once, in insertion order", () => {
    const table = new VolumeTable();
    for (let i = 0; i < 1234; i++) table.publish(`vol-${i}`, "node");
    const seen: string[] = [];
    let offset: number | undefined = 0;
    while (offset !== undefined) {
      const page = table.page(offset, 500);
      seen.push(...page.volumes.map((v) => v.volumeId));
      offset = page.nextOffset;
    }
    expect(seen).toEqual(Array.from({ length: 1234 }, (_, i) => `vol-${i}`));
  });
});
