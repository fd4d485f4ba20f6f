import { describe, expect, it } from "bun:test";
import { Fifo } from "../../../src/queue/fifo";

describe("Fifo", () => {
  it("returns items in insertion order and undefined when empty", () => {
    const fifo = new Fifo<number>();
    fifo.push(1);
    fifo.push(2);
    expect([fifo.shift(), fifo.length, fifo.shift(), fifo.shift(), fifo.length]).toEqual([1, 1, 2, undefined, 0]);
  });

  it("keeps order across compaction of taken slots", () => {
    const fifo = new Fifo<number>();
    const out: number[] = [];
    for (let i = 0; i < 5000; i++) {
      fifo.push(i);
      if (i % 3 !== 0) out.push(fifo.shift() ?? -1);
    }
    for (let item = fifo.shift(); item !== undefined; item = fifo.shift()) out.push(item);
    expect(out).toEqual(Array.from({ length: 5000 }, (_, i) => i));
  });
});
