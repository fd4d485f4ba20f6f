import type { Clock, TimerHandle } from "../../../src/util/clock";

interface FakeTimer {
  readonly id: number;
  readonly dueAt: number;
  readonly fn: () => void;
}

/**
 * FakeClock is a {@link Clock} whose time moves only when a test calls
 * `step` (both readings) or `stepWall` (the wall clock alone, as NTP or an
 * operator would), so timer-driven code is tested without sleeping.
 */
export class FakeClock implements Clock {
  private time: number;
  private wallOffset = 0;
  private nextId = 1;
  private readonly timers = new Map<number, FakeTimer>();
  /** The delay of every timer scheduled so far, in the order they were scheduled. */
  readonly delays: number[] = [];

  constructor(start = 1_000_000) {
    this.time = start;
  }

  now(): number {
    return this.time + this.wallOffset;
  }

  monotonic(): number {
    return this.time;
  }

  /** Steps the wall clock alone, forward or back; timers and the monotonic reading do not move. */
  stepWall(ms: number): void {
    this.wallOffset += ms;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.nextId++;
    this.delays.push(ms);
    this.timers.set(id, { id, dueAt: this.time + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: TimerHandle): void {
    if (typeof handle === "number") this.timers.delete(handle);
  }

  /** The number of timers scheduled and not yet fired or cleared. */
  pendingTimers(): number {
    return this.timers.size;
  }

  /**
   * Advances time by `ms`, firing every timer that falls due on the way in
   * due-time order (ties in scheduling order), with `now()` reading each
   * timer's due time while it runs. Timers scheduled by those callbacks fire
   * too if they fall due within the step.
   */
  step(ms: number): void {
    const target = this.time + ms;
    for (let next = this.nextDue(target); next !== undefined; next = this.nextDue(target)) {
      this.timers.delete(next.id);
      this.time = Math.max(this.time, next.dueAt);
      next.fn();
    }
    this.time = target;
  }

  private nextDue(limit: number): FakeTimer | undefined {
    let next: FakeTimer | undefined;
    for (const timer of this.timers.values()) {
      if (timer.dueAt > limit) continue;
      if (next === undefined || timer.dueAt < next.dueAt || (timer.dueAt === next.dueAt && timer.id < next.id)) {
        next = timer;
      }
    }
    return next;
  }
}
