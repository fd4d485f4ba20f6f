import { describe, expect, it } from "bun:test";
import { MinHeap } from "../../../src/queue/min-heap";

describe("MinHeap", () => {
  it("pops items least first", () => {
    const heap = new MinHeap<number>((a, b) => a < b);
    let seed = 7;
    const input = Array.from({ length: 500 }, () => (seed = (seed * 48271) % 2147483647) % 1000);
    for (const n of input) heap.push(n);
    const out: number[] = [];
    for (let n = heap.pop(); n !== undefined; n = heap.pop()) out.push(n);
    expect(out).toEqual([...input].sort((a, b) => a - b));
  });

  it("peeks without removing and empties on clear", () => {
    const heap = new MinHeap<number>((a, b) => a < b);
    heap.push(3);
    heap.push(1);
    expect([heap.peek(), heap.length]).toEqual([1, 2]);
    heap.clear();
    expect([heap.peek(), heap.pop(), heap.length]).toEqual([undefined, undefined, 0]);
  });
});
