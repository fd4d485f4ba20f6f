import { describe, expect, it } from "bun:test";
import { CallDeadlines, type Expiring } from "../../../src/csi/call-deadlines";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** item is an Expiring that records its name in `expired` when it expires. */
function item(name: string, expired: string[]): Expiring {
  return {
    expiresAt: 0,
    previousExpiring: undefined,
    nextExpiring: undefined,
    expire: () => expired.push(name),
  };
}

describe("call deadlines on one timer", () => {
  it("expires the calls of one length in the order they started, each once", async () => {
    const expired: string[] = [];
    const deadlines = new CallDeadlines();
    deadlines.add(item("a", expired), 100);
    await sleep(50);
    deadlines.add(item("b", expired), 100);
    await sleep(75);
    expect(expired).toEqual(["a"]);
    await sleep(50);
    expect(expired).toEqual(["a", "b"]);
    await sleep(50);
    expect(expired).toEqual(["a", "b"]);
  });

  it("expires each length by its own deadline: a shorter one added later expires first", async () => {
    const expired: string[] = [];
    const deadlines = new CallDeadlines();
    deadlines.add(item("long", expired), 120);
    deadlines.add(item("short", expired), 10);
    await sleep(60);
    expect(expired).toEqual(["short"]);
    await sleep(90);
    expect(expired).toEqual(["short", "long"]);
  });

  it("never expires a call removed before its deadline, whether first, middle or last of its length", async () => {
    const expired: string[] = [];
    const deadlines = new CallDeadlines();
    const calls = ["a", "b", "c", "d"].map((name) => item(name, expired));
    for (const call of calls) deadlines.add(call, 20);
    deadlines.remove(calls[0] as Expiring, 20);
    deadlines.remove(calls[2] as Expiring, 20);
    deadlines.remove(calls[3] as Expiring, 20);
    // Removing twice, or one never added, changes nothing.
    deadlines.remove(calls[3] as Expiring, 20);
    deadlines.remove(item("never added", expired), 20);
    await sleep(40);
    expect(expired).toEqual(["b"]);
  });

  it("expires nothing once every call was removed, and a call added after expires on time", async () => {
    const expired: string[] = [];
    const deadlines = new CallDeadlines();
    const first = item("first", expired);
    deadlines.add(first, 10);
    deadlines.remove(first, 10);
    await sleep(25);
    expect(expired).toEqual([]);
    deadlines.add(item("later", expired), 10);
    await sleep(25);
    expect(expired).toEqual(["later"]);
  });
});
