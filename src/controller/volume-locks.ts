/**
 * VolumeLocks serializes work on one volume (keyed by its volume handle)
 * across workers: a publish for a VA and the recovery that unpublishes a
 * publish nobody names must never interleave, or the volume could end
 * unpublished under a VA that says attached. The VA queue cannot do it:
 * the two are keyed by different names (a VA, a PV).
 *
 * Invariant: `tails` holds a key only while some holder or waiter of it
 * exists; each waiter runs after the previous holder settled, in order.
 */
export class VolumeLocks {
  private readonly tails = new Map<string, Promise<void>>();

  /** withLock runs `work` once no other work on `volumeHandle` runs, and resolves or rejects as it does. */
  async withLock<T>(volumeHandle: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(volumeHandle) ?? Promise.resolve();
    let release = () => {};
    const tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.tails.set(volumeHandle, tail);
    await previous;
    try {
      return await work();
    } finally {
      release();
      if (this.tails.get(volumeHandle) === tail) this.tails.delete(volumeHandle);
    }
  }
}
