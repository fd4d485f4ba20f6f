import type { Socket } from "bun";
import type { SessionSocket } from "./client-session";

type Listener = (...args: never[]) => void;

/**
 * BunSocket is a connection on Bun's own socket (`Bun.connect`) as the
 * HTTP/2 session reads it; the API server's TLS connection and the driver's
 * Unix socket each dial one. Bun's `node:net` and `node:tls` wrap the same
 * socket in a stream Duplex per connection, whose events and buffers cost
 * the floor client 1.3x the anonymous memory of this one in a burst (issue
 * 36, tenth session), and loading `node:net` at all costs a compiled
 * program ~1.3 MiB and ~2 ms at start (twenty-second session).
 *
 * What it keeps for both: the listeners, the frames written before the
 * connection is ready (sent once it is, as much as the socket takes at a
 * time, the rest on "drain"), and one "close". A subclass dials, hands the
 * socket over with `opened`, and says when frames may go with `becameReady`,
 * which also emits "connect".
 */
export abstract class BunSocket implements SessionSocket {
  private socket: Socket | undefined;
  /** Frames may go. */
  private ready = false;
  /** end() or destroy() came before the socket existed. */
  private closed = false;
  private closeEmitted = false;
  private errorEmitted = false;
  private readonly pending: Buffer[] = [];
  private readonly listeners = new Map<string, Listener[]>();
  /** unref() before the socket existed: applied once it does. */
  private wantRef = true;

  on(event: string, listener: Listener): this {
    const list = this.listeners.get(event);
    if (list === undefined) this.listeners.set(event, [listener]);
    else list.push(listener);
    return this;
  }

  write(bytes: Buffer): void {
    if (this.closed) return;
    this.pending.push(bytes);
    this.flush();
  }

  end(): void {
    if (this.socket === undefined) this.closed = true;
    this.socket?.end();
  }

  destroy(): void {
    if (this.socket === undefined) this.closed = true;
    this.socket?.terminate();
  }

  ref(): void {
    this.wantRef = true;
    this.socket?.ref();
  }

  unref(): void {
    this.wantRef = false;
    this.socket?.unref();
  }

  /** Whether frames may go yet (becameReady was called). */
  protected get isReady(): boolean {
    return this.ready;
  }

  /** Whether "error" has been emitted. */
  protected get failed(): boolean {
    return this.errorEmitted;
  }

  /** opened takes the socket Bun connected; one destroyed or unref'd before it existed is treated so now. Answers whether it is still wanted. */
  protected opened(socket: Socket): boolean {
    this.socket = socket;
    if (this.closed) {
      socket.terminate();
      return false;
    }
    if (!this.wantRef) socket.unref();
    return true;
  }

  /** becameReady lets the frames written so far go, and emits "connect". */
  protected becameReady(): void {
    this.ready = true;
    this.emit("connect");
    this.flush();
  }

  /** flush writes what is pending, as much as the socket takes now; the rest waits for "drain". */
  protected flush(): void {
    const socket = this.socket;
    if (socket === undefined || !this.ready) return;
    while (this.pending.length > 0) {
      const head = this.pending[0] as Buffer;
      const written = socket.write(head);
      if (written < head.length) {
        this.pending[0] = head.subarray(Math.max(0, written));
        return;
      }
      this.pending.shift();
    }
  }

  /** fail drops what is pending, emits `error` and ends the connection. */
  protected fail(socket: Socket, error: unknown): void {
    this.pending.length = 0;
    this.emitError(error);
    socket.terminate();
  }

  protected emitError(error: unknown): void {
    this.errorEmitted = true;
    this.emit("error", error);
  }

  protected closeOnce(): void {
    if (this.closeEmitted) return;
    this.closeEmitted = true;
    this.socket = undefined;
    this.emit("close");
  }

  protected emit(event: string, ...args: unknown[]): void {
    for (const listener of this.listeners.get(event) ?? []) (listener as (...a: unknown[]) => void)(...args);
  }
}
