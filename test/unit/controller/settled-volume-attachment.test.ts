import { describe, expect, it } from "bun:test";
import { isSettled, type VolumeAttachmentProgress } from "../../../src/controller/settled-volume-attachment";

/** A VA nobody is working on, whose cache entry is the one the pass compared and shows our last write. */
const quiet: VolumeAttachmentProgress = { queuedOrProcessing: false, comparedVersion: "7", cachedVersion: "7", unobservedWriteVersion: undefined };

describe("a VolumeAttachment is settled", () => {
  it("when it is not queued, no worker holds it, the cache still holds the compared version, and no write of ours is unobserved", () => {
    expect(isSettled(quiet)).toBe(true);
  });

  it("not while its name is queued or a worker holds it (published, attached: true not written yet)", () => {
    expect(isSettled({ ...quiet, queuedOrProcessing: true })).toBe(false);
  });

  it("not when it changed or vanished while the driver was being listed", () => {
    expect([isSettled({ ...quiet, cachedVersion: "8" }), isSettled({ ...quiet, cachedVersion: undefined })]).toEqual([false, false]);
  });

  it("not while the cache shows an older version than our last write returned", () => {
    expect([isSettled({ ...quiet, unobservedWriteVersion: "8" }), isSettled({ ...quiet, comparedVersion: "a", cachedVersion: "a", unobservedWriteVersion: "b" })]).toEqual([false, false]);
  });

  it("once the cache shows our last write, or an integer version newer than it", () => {
    expect([isSettled({ ...quiet, unobservedWriteVersion: "7" }), isSettled({ ...quiet, unobservedWriteVersion: "6" })]).toEqual([true, true]);
  });

  it("not when an opaque version cannot be ordered against our last write", () => {
    expect(isSettled({ ...quiet, comparedVersion: "x9", cachedVersion: "x9", unobservedWriteVersion: "x8" })).toBe(false);
  });
});
