/**
 * Fifo is a first-in, first-out list with O(1) amortized `shift`.
 * `Array.prototype.shift` moves every remaining element, which adds up when
 * thousands of VolumeAttachments are queued after a resync.
 */
export class Fifo<T> {
  /** Live items are `items[head..]`; slots before `head` were already taken. */
  private items: T[] = [];
  private head = 0;

  /** The number of items waiting. */
  get length(): number {
    return this.items.length - this.head;
  }

  /** Appends `item` at the back. */
  push(item: T): void {
    this.items.push(item);
  }

  /** Removes and returns the front item, or `undefined` when empty. */
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.head++;
    // Drop taken slots once they are the majority, so memory follows the
    // live length without copying on every shift.
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    } else if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    }
    return item;
  }
}
