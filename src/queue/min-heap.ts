/**
 * MinHeap is a binary heap ordered by `less`; the delaying queue keeps its
 * waiting items in one, as client-go's `waitForPriorityQueue` does, so one
 * timer for the earliest item is enough.
 */
export class MinHeap<T> {
  private readonly items: T[] = [];

  /** `less(a, b)` is true when `a` must come out before `b`. */
  constructor(private readonly less: (a: T, b: T) => boolean) {}

  /** The number of items held. */
  get length(): number {
    return this.items.length;
  }

  /** Returns the least item without removing it, or `undefined` when empty. */
  peek(): T | undefined {
    return this.items[0];
  }

  /** Adds `item`. */
  push(item: T): void {
    this.items.push(item);
    this.up(this.items.length - 1);
  }

  /** Removes and returns the least item, or `undefined` when empty. */
  pop(): T | undefined {
    const top = this.items[0];
    const last = this.items.pop();
    if (top === undefined || last === undefined) return undefined;
    if (this.items.length > 0) {
      this.items[0] = last;
      this.down(0);
    }
    return top;
  }

  /** Removes everything. */
  clear(): void {
    this.items.length = 0;
  }

  private up(index: number): void {
    let child = index;
    while (child > 0) {
      const parent = (child - 1) >> 1;
      if (!this.swapIfLess(child, parent)) return;
      child = parent;
    }
  }

  private down(index: number): void {
    let parent = index;
    for (;;) {
      const left = 2 * parent + 1;
      const right = left + 1;
      let least = parent;
      if (left < this.items.length && this.isLess(left, least)) least = left;
      if (right < this.items.length && this.isLess(right, least)) least = right;
      if (least === parent) return;
      this.swap(parent, least);
      parent = least;
    }
  }

  private isLess(i: number, j: number): boolean {
    const a = this.items[i];
    const b = this.items[j];
    return a !== undefined && b !== undefined && this.less(a, b);
  }

  /** Swaps items `i` and `j` if `i` is less; returns whether it did. */
  private swapIfLess(i: number, j: number): boolean {
    if (!this.isLess(i, j)) return false;
    this.swap(i, j);
    return true;
  }

  private swap(i: number, j: number): void {
    const a = this.items[i];
    const b = this.items[j];
    if (a === undefined || b === undefined) return;
    this.items[i] = b;
    this.items[j] = a;
  }
}
