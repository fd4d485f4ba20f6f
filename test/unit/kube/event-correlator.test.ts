import { describe, expect, it } from "bun:test";
import { EventCorrelator } from "../../../src/kube/event-correlator";
import { EventSpamFilter } from "../../../src/kube/event-spam-filter";
import { LruCache } from "../../../src/kube/lru-cache";
import { eventNamer, formatKubeTime, volumeAttachmentReference, type CoreEvent } from "../../../src/kube/objects/event";
import { FakeClock } from "../queue/fake-clock";

const start = Date.UTC(2026, 10, 22, 11, 0, 0);

function correlatorAt(clock: FakeClock, options: { burst?: number } = {}): EventCorrelator {
  return new EventCorrelator({ clock, nameEvent: eventNamer(() => clock.now()), ...options });
}

function attachFailed(clock: FakeClock, message: string, name = "csi-va1"): CoreEvent {
  const timestamp = formatKubeTime(clock.now());
  return {
    metadata: { name: `${name}.${clock.now()}`, namespace: "default" },
    involvedObject: volumeAttachmentReference({ name, uid: `uid-${name}`, resourceVersion: "7" }),
    reason: "AttachFailed",
    message,
    type: "Warning",
    source: { component: "csi-attacher", host: "pod-a" },
    reportingComponent: "csi-attacher",
    reportingInstance: "pod-a",
    firstTimestamp: timestamp,
    lastTimestamp: timestamp,
    count: 1,
  };
}

describe("event deduplication", () => {
  it("turns a repeat of the same reason and message into a patch of count, lastTimestamp and message of the first event", () => {
    const clock = new FakeClock(start);
    const correlator = correlatorAt(clock);
    const first = correlator.correlate(attachFailed(clock, "rpc error: code = Internal desc = boom"));
    if (first.skip) throw new Error("first event skipped");
    expect(first.patch).toBeUndefined();
    correlator.updateState(first.key, { ...first.event, metadata: { ...first.event.metadata, resourceVersion: "100" } });

    clock.step(30_000);
    const second = correlator.correlate(attachFailed(clock, "rpc error: code = Internal desc = boom"));
    if (second.skip) throw new Error("second event skipped");
    expect(second.patch).toEqual({ count: 2, lastTimestamp: "2026-11-22T11:00:30Z", message: "rpc error: code = Internal desc = boom" });
    expect(second.event.metadata).toEqual({ name: first.event.metadata.name, namespace: "default", resourceVersion: "100" });
    expect(second.event.firstTimestamp).toBe("2026-11-22T11:00:00Z");
  });

  it("keeps counting from the previous repeat even before the server's answer is recorded", () => {
    const clock = new FakeClock(start);
    const correlator = correlatorAt(clock);
    correlator.correlate(attachFailed(clock, "boom"));
    correlator.correlate(attachFailed(clock, "boom"));
    const third = correlator.correlate(attachFailed(clock, "boom"));
    expect(third.skip ? undefined : third.patch?.count).toBe(3);
  });

  it("writes a different message, or the same message about another VA, as a new event", () => {
    const clock = new FakeClock(start);
    const correlator = correlatorAt(clock);
    correlator.correlate(attachFailed(clock, "boom"));
    const other = correlator.correlate(attachFailed(clock, "bang"));
    const otherVa = correlator.correlate(attachFailed(clock, "boom", "csi-va2"));
    expect(other.skip ? "skipped" : other.patch).toBeUndefined();
    expect(otherVa.skip ? "skipped" : otherVa.patch).toBeUndefined();
  });
});

describe("event aggregation", () => {
  it("combines the 10th and later distinct messages of one reason about one VA into one event", () => {
    const clock = new FakeClock(start);
    const correlator = correlatorAt(clock);
    for (let i = 1; i <= 9; i++) {
      const result = correlator.correlate(attachFailed(clock, `timeout after ${i}s`));
      expect(result.skip ? "skipped" : result.event.message).toBe(`timeout after ${i}s`);
    }
    const tenth = correlator.correlate(attachFailed(clock, "timeout after 10s"));
    const eleventh = correlator.correlate(attachFailed(clock, "timeout after 11s"));
    if (tenth.skip || eleventh.skip) throw new Error("skipped");
    expect(tenth.event.message).toBe("(combined from similar events): timeout after 10s");
    expect(tenth.patch).toBeUndefined();
    expect(eleventh.patch).toEqual({ count: 2, lastTimestamp: "2026-11-22T11:00:00Z", message: "(combined from similar events): timeout after 11s" });
    expect(eleventh.event.metadata.name).toBe(tenth.event.metadata.name);
  });

  it("starts counting distinct messages afresh after 10 quiet minutes", () => {
    const clock = new FakeClock(start);
    const correlator = correlatorAt(clock);
    for (let i = 1; i <= 9; i++) correlator.correlate(attachFailed(clock, `m${i}`));
    clock.step(600_001);
    const result = correlator.correlate(attachFailed(clock, "m10"));
    expect(result.skip ? "skipped" : result.event.message).toBe("m10");
  });
});

describe("event rate limit", () => {
  it("lets 25 writes about one VA through, then one more every five minutes", () => {
    const clock = new FakeClock(start);
    const correlator = correlatorAt(clock);
    const outcomes = Array.from({ length: 30 }, () => correlator.correlate(attachFailed(clock, "boom")).skip);
    expect(outcomes.filter((skipped) => !skipped).length).toBe(25);
    expect(outcomes.slice(25)).toEqual([true, true, true, true, true]);
    clock.step(299_000);
    expect(correlator.correlate(attachFailed(clock, "boom")).skip).toBe(true);
    clock.step(1_000);
    expect(correlator.correlate(attachFailed(clock, "boom")).skip).toBe(false);
    expect(correlator.correlate(attachFailed(clock, "boom")).skip).toBe(true);
  });

  it("limits each VA separately", () => {
    const clock = new FakeClock(start);
    const filter = new EventSpamFilter({ clock, burst: 2 });
    expect([filter.allow("va1"), filter.allow("va1"), filter.allow("va1"), filter.allow("va2")]).toEqual([true, true, false, true]);
  });
});

describe("LRU cache", () => {
  it("forgets the least recently used entry when full", () => {
    const cache = new LruCache<string, number>(2);
    cache.set("a", 1);
    cache.set("b", 2);
    cache.get("a");
    cache.set("c", 3);
    expect([cache.get("a"), cache.get("b"), cache.get("c"), cache.size]).toEqual([1, undefined, 3, 2]);
  });
});

describe("event names", () => {
  it("are <object>.<nanoseconds in hex>, distinct within one millisecond", () => {
    const name = eventNamer(() => 1_000);
    expect(name("csi-va1")).toBe(`csi-va1.${(1_000n * 1_000_000n + 1n).toString(16)}`);
    expect(name("csi-va1")).toBe(`csi-va1.${(1_000n * 1_000_000n + 2n).toString(16)}`);
  });
});
