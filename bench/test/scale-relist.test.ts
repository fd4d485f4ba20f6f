import { describe, expect, it } from "bun:test";
import { klogTime, relistDoneAt } from "../scenarios/scale";

describe("scale relist from the attachers' logs", () => {
  const since = new Date(2026, 10, 23, 18, 15, 20).getTime();
  const goLog = [
    'I1123 18:07:11.660015   17740 reflector.go:507] "Caches populated" type="*v1.PersistentVolume" reflector="x"',
    'I1123 18:15:24.299665   24970 reflector.go:507] "Caches populated" type="*v1.VolumeAttachment" reflector="x"',
    'I1123 18:15:24.683039   24970 reflector.go:507] "Caches populated" type="*v1.PersistentVolume" reflector="x"',
  ].join("\n");

  it("reads klog's local time to the millisecond", () => {
    expect(klogTime(goLog.split("\n")[2] ?? "", 2026) - since).toBe(4683);
  });

  it("is the later of the VA and PV lists logged since the restart, ignoring the start-up lists", () => {
    expect(relistDoneAt(goLog, "go", since) - since).toBe(4683);
  });

  it("is NaN until both lists are logged", () => {
    const oursLog = 'I1123 18:15:21.000000   1 reflector.ts:126] "Listed" kind="VolumeAttachment" count=10';
    expect(relistDoneAt(oursLog, "ours", since)).toBeNaN();
    expect(relistDoneAt(`${oursLog}\nI1123 18:15:22.500000   1 reflector.ts:126] "Listed" kind="PersistentVolume" count=10`, "ours", since) - since).toBe(2500);
  });
});
