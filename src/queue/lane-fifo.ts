import { Fifo } from "./fifo";

/**
 * LaneFifo is a FIFO split into lanes that are served in turn: each lane
 * keeps its own order, and when several lanes hold items, `shift` takes from
 * the next non-empty lane after the one it served last. A burst in one lane
 * therefore delays an item of another lane by at most one hand-out per other
 * lane, instead of by the whole burst.
 *
 * The attacher puts attaches and detaches in separate lanes of its VA queue:
 * upstream serves one FIFO, so a new attach waits behind every queued detach
 * (kubernetes-csi/external-attacher#761), while here it goes to the next free
 * worker, and detaches still get every other worker slot.
 */
export class LaneFifo<T> {
  private readonly lanes: Fifo<T>[];
  /** The lane `shift` served last; the search for the next item starts after it. */
  private lastServed: number;
  private size = 0;

  /**
   * @param laneCount how many lanes (at least 1).
   * @param laneOf which lane an item goes in, 0 to laneCount - 1; asked once, when the item is pushed.
   */
  constructor(
    laneCount: number,
    private readonly laneOf: (item: T) => number,
  ) {
    this.lanes = Array.from({ length: Math.max(1, laneCount) }, () => new Fifo<T>());
    this.lastServed = this.lanes.length - 1;
  }

  /** The number of items waiting in all lanes. */
  get length(): number {
    return this.size;
  }

  /** The lane the last successful `shift` took its item from. */
  get servedLane(): number {
    return this.lastServed;
  }

  /** Appends `item` at the back of its lane. */
  push(item: T): void {
    const lane = this.lanes[this.laneOf(item)] ?? this.lanes[0];
    lane?.push(item);
    this.size++;
  }

  /**
   * Removes and returns the front item of the next lane in turn, or
   * `undefined` when all are empty. With `open`, lanes it answers false for
   * are passed over as if empty: their items wait, in order, for a later
   * `shift` (the work queue closes a lane whose items fill their share of
   * the workers).
   */
  shift(open?: (lane: number) => boolean): T | undefined {
    if (this.size === 0) return undefined;
    for (let step = 1; step <= this.lanes.length; step++) {
      const index = (this.lastServed + step) % this.lanes.length;
      const lane = this.lanes[index];
      if (lane === undefined || lane.length === 0) continue;
      if (open !== undefined && !open(index)) continue;
      this.lastServed = index;
      this.size--;
      return lane.shift();
    }
    return undefined;
  }
}
