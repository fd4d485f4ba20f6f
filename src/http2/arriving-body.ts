/**
 * ArrivingBody is the body of a response read as it arrives (a watch): the
 * session's receiver pushes each DATA payload, the reader takes what has
 * come in one piece, and only what it took is released to the peer's
 * flow-control window (ClientStream.release), so a reader that falls behind
 * holds at most a window of it.
 *
 * A reader waiting for more is woken once per turn of the event loop, after
 * every frame of the socket's chunk is in: the API server sends each watch
 * event as a DATA frame of its own, and waking the reader per frame cost a
 * promise turn per event.
 */
export class ArrivingBody {
  private pieces: Buffer[] = [];
  private waiter: { resolve: (piece: Buffer | undefined) => void; reject: (e: unknown) => void } | undefined;
  private wakeScheduled = false;
  /** Set once the body is complete (error undefined) or cut (the error). */
  private ended: { error: unknown } | undefined;

  constructor(private readonly release: (octets: number) => void) {}

  push(piece: Buffer): void {
    if (this.ended !== undefined) return;
    this.pieces.push(piece);
    this.wake();
  }

  /** finish ends the body: complete without an error, cut with one. What was pushed before is still read first. */
  finish(error?: unknown): void {
    this.ended ??= { error };
    this.wake();
  }

  /** next resolves with all that has arrived and not been read, or undefined at the end; it rejects once the rest of a cut body is read. */
  next(): Promise<Buffer | undefined> {
    if (this.pieces.length > 0) return Promise.resolve(this.take());
    if (this.ended !== undefined) return this.ended.error === undefined ? Promise.resolve(undefined) : Promise.reject(this.ended.error);
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  private take(): Buffer {
    const batch = this.pieces.length === 1 ? (this.pieces[0] as Buffer) : Buffer.concat(this.pieces);
    this.pieces = [];
    this.release(batch.length);
    return batch;
  }

  private wake(): void {
    if (this.waiter === undefined || this.wakeScheduled) return;
    this.wakeScheduled = true;
    queueMicrotask(() => {
      this.wakeScheduled = false;
      const waiter = this.waiter;
      if (waiter === undefined) return;
      if (this.pieces.length > 0) {
        this.waiter = undefined;
        waiter.resolve(this.take());
      } else if (this.ended !== undefined) {
        this.waiter = undefined;
        if (this.ended.error === undefined) waiter.resolve(undefined);
        else waiter.reject(this.ended.error);
      }
    });
  }
}
