import { describe, expect, it } from "bun:test";
import { LaneFifo } from "../../../src/queue/lane-fifo";

function drain(fifo: LaneFifo<string>): string[] {
  const items: string[] = [];
  for (let item = fifo.shift(); item !== undefined; item = fifo.shift()) items.push(item);
  return items;
}

describe("LaneFifo", () => {
  it("serves non-empty lanes in turn, each in its own order", () => {
    const fifo = new LaneFifo<string>(2, (item) => (item.startsWith("d") ? 1 : 0));
    for (const item of ["d1", "d2", "d3", "d4", "a1", "a2"]) fifo.push(item);
    expect([fifo.length, ...drain(fifo), fifo.length]).toEqual([6, "a1", "d1", "a2", "d2", "d3", "d4", 0]);
  });

  it("hands a late item of an idle lane out next, however long the other lane's backlog", () => {
    const fifo = new LaneFifo<string>(2, (item) => (item.startsWith("d") ? 1 : 0));
    for (let i = 0; i < 100; i++) fifo.push(`d${i}`);
    expect([fifo.shift(), fifo.shift()]).toEqual(["d0", "d1"]);
    fifo.push("a-late");
    expect(fifo.shift()).toBe("a-late");
  });

  it("is a plain FIFO with one lane", () => {
    const fifo = new LaneFifo<string>(1, () => 0);
    for (const item of ["c", "a", "b"]) fifo.push(item);
    expect(drain(fifo)).toEqual(["c", "a", "b"]);
  });

  it("passes over lanes that are not open, keeping their order for later", () => {
    const fifo = new LaneFifo<string>(2, (item) => (item.startsWith("d") ? 1 : 0));
    for (const item of ["d1", "d2", "a1"]) fifo.push(item);
    const attachOnly = (lane: number) => lane === 0;
    expect([fifo.shift(attachOnly), fifo.servedLane, fifo.shift(attachOnly), fifo.length, fifo.shift(), fifo.servedLane, fifo.shift()]).toEqual(["a1", 0, undefined, 2, "d1", 1, "d2"]);
  });
});
