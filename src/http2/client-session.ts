import { HpackDecoder, HpackDecodingError, type HeaderField } from "./hpack-decoder";
import { encodeHeaderBlock } from "./hpack-encoder";
import {
  clientPreface,
  defaultHeaderTableSize,
  defaultInitialWindowSize,
  defaultMaxFrameSize,
  encodeFrame,
  ErrorCode,
  Flag,
  frame,
  frameHeaderLength,
  FrameType,
  maxWindowSize,
  Setting,
  settingsPayload,
  u32Payload,
} from "./frames";

/** Header fields as received, by lowercase name; a name sent more than once holds each value (node:http2's IncomingHttpHeaders shape). */
export type HeaderRecord = Record<string, string | string[]>;

/** How a stream ended, as its caller learns it (once). */
export type StreamEnd =
  | {
      readonly kind: "closed";
      /** The response's header block (1xx ones skipped); absent when the stream was reset first. */
      readonly headers: HeaderRecord | undefined;
      /** The trailing header block, when one came. */
      readonly trailers: HeaderRecord | undefined;
      readonly chunks: readonly Buffer[];
      /** The code of the peer's RST_STREAM (or GOAWAY's refusal, REFUSED_STREAM) when that ended it. */
      readonly resetCode: number | undefined;
      /** The peer had said GOAWAY when the stream ended: it is shutting the connection down. */
      readonly peerGoingAway: boolean;
    }
  | {
      readonly kind: "connection lost";
      /** The socket's error when it failed before it ever connected (a refused dial); undefined once it had connected. */
      readonly dialError: unknown;
    };

/**
 * The connection a session runs on: a `net.Socket` to the driver's Unix
 * socket, or the API server's TLS socket (kube/tls-socket.ts). "connect"
 * says it is ready for the preface; frames written before are held.
 */
export interface SessionSocket {
  on(event: "connect" | "close", listener: () => void): unknown;
  on(event: "data", listener: (chunk: Buffer) => void): unknown;
  on(event: "error", listener: (e: unknown) => void): unknown;
  write(bytes: Buffer): unknown;
  end(): unknown;
  destroy(): unknown;
  ref?(): unknown;
  unref?(): unknown;
}

/**
 * A receiver reads a response as it arrives, for a body without an end in
 * sight (a watch): its header block, then each DATA payload. The stream's
 * flow-control window is given back only as the caller releases what it
 * has consumed (ClientStream.release), so a slow reader holds at most one
 * window of it in memory. Its StreamEnd then carries no chunks.
 */
export interface StreamReceiver {
  onHeaders(headers: HeaderRecord): void;
  onData(chunk: Buffer): void;
}

/** What the session tells its owner. */
export interface ClientSessionEvents {
  /** No new stream may start on it any more: the peer said GOAWAY, the stream IDs ran out, or the connection ended. Called once. */
  readonly onGone: () => void;
}

/** A stream a caller started: it may reset it (it then hears nothing more of it). */
export interface ClientStream {
  reset(code: number): void;
  /** For a stream read by a StreamReceiver: `octets` of its DATA are consumed, and the peer may send that much more. */
  release(octets: number): void;
}

/** How much this side lets the peer send on a stream, and on the connection, before it is read (SETTINGS_INITIAL_WINDOW_SIZE, and the connection's WINDOW_UPDATE at start). */
const receiveWindow = 1 << 20;
/** The last client-initiated stream ID (section 5.1.1). */
const lastStreamId = maxWindowSize;

/** OpenStream is one stream this side started, from its request to its end. */
interface OpenStream {
  readonly id: number;
  readonly onEnd: (end: StreamEnd) => void;
  readonly receiver: StreamReceiver | undefined;
  /** The request body not sent yet (flow control holds it), with END_STREAM to follow. */
  pendingBody: Buffer | undefined;
  /** How much more this side may send on it (the peer's window). */
  sendWindow: number;
  /** DATA octets received and not yet given back by a WINDOW_UPDATE. */
  unacknowledged: number;
  headers: HeaderRecord | undefined;
  trailers: HeaderRecord | undefined;
  readonly chunks: Buffer[];
}

/** A request waiting for the peer's limit of concurrent streams. */
interface QueuedRequest {
  readonly headerBlock: Uint8Array;
  readonly body: Buffer;
  readonly onEnd: (end: StreamEnd) => void;
  readonly receiver: StreamReceiver | undefined;
  started: OpenStream | undefined;
  cancelled: boolean;
}

/** A header block arriving in CONTINUATION frames. */
interface HeaderBlockInProgress {
  readonly streamId: number;
  readonly endStream: boolean;
  readonly fragments: Buffer[];
}

/**
 * Http2ClientSession is the client side of one HTTP/2 connection (RFC
 * 9113; the preface is sent at once: over prior knowledge, as gRPC over a
 * Unix socket speaks it, or after TLS chose "h2") that carries requests
 * whose bodies are known whole when they start: unary gRPC calls to the
 * driver, and the API server's requests, whose answers are read whole or,
 * for a watch, as they arrive (StreamReceiver). Both run on it instead of
 * `node:http2` and fetch: the attacher spends 0.85x the CPU of a burst it
 * spent on `node:http2`'s per-stream Duplex, events and buffers (issue 36,
 * ninth session), and the floor 0.74-0.80x of what it spent on fetch's
 * HTTP/1.1 (tenth session; bench/results/README.md).
 *
 * A request is one write: HEADERS and the body's DATA frames, END_STREAM
 * on the last. Frames of requests started in one turn of the event loop
 * go out in one socket write. Flow control is kept both ways: bodies
 * larger than the peer's windows wait for its WINDOW_UPDATEs, and what the
 * peer sends is given back as it is read. The peer's SETTINGS are obeyed
 * (concurrent streams, frame size, initial window), its PINGs answered,
 * its GOAWAY honoured (streams it never processed end as refused). A
 * protocol violation by the peer ends the connection with GOAWAY.
 *
 * Invariant: `streams` holds every started stream whose end its caller
 * has not been told and that it has not reset; `queue` the requests not
 * started for the peer's concurrency limit, in order.
 */
export class Http2ClientSession {
  private readonly decoder = new HpackDecoder(defaultHeaderTableSize);
  private readonly streams = new Map<number, OpenStream>();
  private readonly queue: QueuedRequest[] = [];
  private nextStreamId = 1;
  private connected = false;
  private gone = false;
  /** The peer said GOAWAY: it is shutting the connection down. */
  private goAwayReceived = false;
  private lost = false;
  private dialError: unknown;
  /** The peer's settings as far as they bind this side. */
  private peerMaxConcurrentStreams = Number.POSITIVE_INFINITY;
  private peerInitialWindow = defaultInitialWindowSize;
  private peerMaxFrameSize = defaultMaxFrameSize;
  /** How much more this side may send on the connection. */
  private connectionSendWindow = defaultInitialWindowSize;
  /** DATA octets received on the connection not given back yet. */
  private connectionUnacknowledged = 0;
  /** Received octets that do not make a whole frame yet. */
  private partial: Buffer | undefined;
  private headerBlock: HeaderBlockInProgress | undefined;
  /** Frames to write at the end of this turn, in order. */
  private outgoing: Buffer[] = [];
  private flushScheduled = false;
  /** When the last frame was read (performance.now()), for a health check that pings a connection gone quiet. */
  private lastReadAt = performance.now();
  /** Callers of ping() waiting for the peer's acknowledgement, by the PING's payload. */
  private readonly pings = new Map<bigint, () => void>();
  private nextPingId = 0n;

  constructor(
    private readonly socket: SessionSocket,
    private readonly events: ClientSessionEvents,
  ) {
    socket.on("connect", () => {
      this.connected = true;
    });
    socket.on("data", (chunk: Buffer) => this.receive(chunk));
    socket.on("error", (e: unknown) => {
      if (!this.connected) this.dialError ??= e;
      this.connectionLost();
    });
    socket.on("close", () => this.connectionLost());
    this.send(clientPreface);
    this.send(
      frame(
        FrameType.settings,
        0,
        0,
        settingsPayload([
          [Setting.enablePush, 0],
          [Setting.initialWindowSize, receiveWindow],
        ]),
      ),
    );
    this.send(frame(FrameType.windowUpdate, 0, 0, u32Payload(receiveWindow - defaultInitialWindowSize)));
    socket.unref?.();
  }

  /** usable: a new request may still start here. */
  usable(): boolean {
    return !this.gone;
  }

  /** quietForMs is how long no frame has come from the peer. */
  quietForMs(): number {
    return performance.now() - this.lastReadAt;
  }

  /** ping sends a PING; `onAck` is called when the peer acknowledges it (never, if the connection is lost first). */
  ping(onAck: () => void): void {
    if (this.lost) return;
    const id = this.nextPingId++;
    const payload = Buffer.alloc(8);
    payload.writeBigUInt64BE(id);
    this.pings.set(id, onAck);
    this.send(frame(FrameType.ping, 0, 0, payload));
  }

  /** destroy drops the connection: every stream ends as a lost connection. For an owner that judged the peer gone (a PING unanswered). */
  destroy(): void {
    if (this.lost) return;
    this.socket.destroy();
    this.connectionLost();
  }

  /**
   * request starts a stream with `fields` as its header block and `body` as
   * its whole body; `onEnd` hears how it ended, once, unless the caller
   * resets it first. With a `receiver`, the response is handed over as it
   * arrives instead of in `onEnd`. On a session that is gone it ends at
   * once as lost.
   */
  request(fields: readonly HeaderField[], body: Buffer, onEnd: (end: StreamEnd) => void, receiver?: StreamReceiver): ClientStream {
    const queued: QueuedRequest = { headerBlock: encodeHeaderBlock(fields), body, onEnd, receiver, started: undefined, cancelled: false };
    if (this.lost || this.gone) {
      queueMicrotask(() => onEnd({ kind: "connection lost", dialError: this.dialError }));
      return { reset: () => {}, release: () => {} };
    }
    this.queue.push(queued);
    this.startQueued();
    return {
      reset: (code) => {
        queued.cancelled = true;
        const stream = queued.started;
        if (stream === undefined || !this.streams.has(stream.id)) return;
        this.streams.delete(stream.id);
        this.send(frame(FrameType.rstStream, 0, stream.id, u32Payload(code)));
        this.afterStreamEnded();
      },
      release: (octets) => {
        const stream = queued.started;
        if (stream === undefined || !this.streams.has(stream.id)) return;
        this.acknowledge(stream, octets);
      },
    };
  }

  private startQueued(): void {
    while (this.queue.length > 0 && this.streams.size < this.peerMaxConcurrentStreams && !this.gone) {
      const next = this.queue.shift() as QueuedRequest;
      if (next.cancelled) continue;
      const id = this.nextStreamId;
      this.nextStreamId += 2;
      const stream: OpenStream = { id, onEnd: next.onEnd, receiver: next.receiver, pendingBody: next.body, sendWindow: this.peerInitialWindow, unacknowledged: 0, headers: undefined, trailers: undefined, chunks: [] };
      next.started = stream;
      this.streams.set(id, stream);
      if (this.streams.size === 1) this.socket.ref?.();
      this.sendHeaderBlock(id, next.headerBlock);
      this.sendBody(stream);
      if (this.nextStreamId > lastStreamId) this.goneForNewStreams();
    }
  }

  /** sendHeaderBlock writes HEADERS, and CONTINUATION frames when the block is larger than a frame. */
  private sendHeaderBlock(id: number, block: Uint8Array): void {
    const size = this.peerMaxFrameSize;
    for (let offset = 0; offset === 0 || offset < block.length; offset += size) {
      const end = Math.min(block.length, offset + size);
      const flags = end === block.length ? Flag.endHeaders : 0;
      this.send(frame(offset === 0 ? FrameType.headers : FrameType.continuation, flags, id, block.subarray(offset, end)));
    }
  }

  /** sendBody writes as much of the stream's pending body as both windows allow, END_STREAM with its last octet. */
  private sendBody(stream: OpenStream): void {
    let body = stream.pendingBody;
    while (body !== undefined) {
      const room = Math.min(this.connectionSendWindow, stream.sendWindow, this.peerMaxFrameSize);
      // A body that does not fit waits for a WINDOW_UPDATE; an empty one goes at once.
      if (room <= 0 && body.length > 0) break;
      const take = Math.min(room, body.length);
      const last = take === body.length;
      const out = Buffer.allocUnsafe(frameHeaderLength + take);
      encodeFrame(out, 0, FrameType.data, last ? Flag.endStream : 0, stream.id, body.subarray(0, take));
      this.send(out);
      this.connectionSendWindow -= take;
      stream.sendWindow -= take;
      body = last ? undefined : body.subarray(take);
    }
    stream.pendingBody = body;
  }

  private send(bytes: Buffer): void {
    this.outgoing.push(bytes);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    queueMicrotask(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.lost || this.outgoing.length === 0) return;
    const bytes = this.outgoing.length === 1 ? (this.outgoing[0] as Buffer) : Buffer.concat(this.outgoing);
    this.outgoing = [];
    this.socket.write(bytes);
  }

  private receive(chunk: Buffer): void {
    this.lastReadAt = performance.now();
    const bytes = this.partial === undefined ? chunk : Buffer.concat([this.partial, chunk]);
    this.partial = undefined;
    let offset = 0;
    while (!this.lost && bytes.length - offset >= frameHeaderLength) {
      const length = ((bytes[offset] as number) << 16) | ((bytes[offset + 1] as number) << 8) | (bytes[offset + 2] as number);
      if (length > defaultMaxFrameSize) {
        this.connectionError(ErrorCode.frameSizeError);
        return;
      }
      if (bytes.length - offset < frameHeaderLength + length) break;
      const type = bytes[offset + 3] as number;
      const flags = bytes[offset + 4] as number;
      const streamId = bytes.readUInt32BE(offset + 5) & maxWindowSize;
      const payload = bytes.subarray(offset + frameHeaderLength, offset + frameHeaderLength + length);
      offset += frameHeaderLength + length;
      this.handleFrame(type, flags, streamId, payload);
    }
    // A copy: the socket's chunk is not kept alive for a few leftover octets.
    if (offset < bytes.length && !this.lost) this.partial = Buffer.from(bytes.subarray(offset));
  }

  private handleFrame(type: number, flags: number, streamId: number, payload: Buffer): void {
    if (this.headerBlock !== undefined && (type !== FrameType.continuation || streamId !== this.headerBlock.streamId)) {
      this.connectionError(ErrorCode.protocolError);
      return;
    }
    switch (type) {
      case FrameType.data:
        this.onData(flags, streamId, payload);
        return;
      case FrameType.headers:
        this.onHeaders(flags, streamId, payload);
        return;
      case FrameType.continuation:
        this.onContinuation(flags, payload);
        return;
      case FrameType.rstStream:
        if (payload.length !== 4) return this.connectionError(ErrorCode.frameSizeError);
        this.endStream(streamId, payload.readUInt32BE(0));
        return;
      case FrameType.settings:
        this.onSettings(flags, payload);
        return;
      case FrameType.ping:
        if (payload.length !== 8) return this.connectionError(ErrorCode.frameSizeError);
        if ((flags & Flag.ack) === 0) this.send(frame(FrameType.ping, Flag.ack, 0, payload));
        else this.onPingAck(payload.readBigUInt64BE(0));
        return;
      case FrameType.goAway:
        if (payload.length < 8) return this.connectionError(ErrorCode.frameSizeError);
        this.onGoAway(payload.readUInt32BE(0) & maxWindowSize);
        return;
      case FrameType.windowUpdate:
        if (payload.length !== 4) return this.connectionError(ErrorCode.frameSizeError);
        this.onWindowUpdate(streamId, payload.readUInt32BE(0) & maxWindowSize);
        return;
      case FrameType.pushPromise:
        // This side said SETTINGS_ENABLE_PUSH 0 (section 8.4).
        this.connectionError(ErrorCode.protocolError);
        return;
      default:
        // PRIORITY and unknown frame types are ignored (section 5.5).
        return;
    }
  }

  private onData(flags: number, streamId: number, payload: Buffer): void {
    // Flow control counts the whole payload, padding included (section 6.9.1).
    this.connectionUnacknowledged += payload.length;
    if (this.connectionUnacknowledged >= receiveWindow / 2) {
      this.send(frame(FrameType.windowUpdate, 0, 0, u32Payload(this.connectionUnacknowledged)));
      this.connectionUnacknowledged = 0;
    }
    const stream = this.streams.get(streamId);
    if (stream === undefined) return;
    const data = (flags & Flag.padded) !== 0 ? unpadded(payload) : payload;
    if (data === undefined || stream.headers === undefined) {
      // DATA before the response's headers (a Node.js server destroying its
      // session ends its streams so), or padding longer than the frame: no
      // answer will come on this stream.
      if ((flags & Flag.endStream) === 0) this.send(frame(FrameType.rstStream, 0, streamId, u32Payload(ErrorCode.protocolError)));
      else stream.pendingBody = undefined;
      this.endStream(streamId, undefined);
      return;
    }
    if (data.length > 0) {
      if (stream.receiver === undefined) stream.chunks.push(data);
      else stream.receiver.onData(data);
    }
    if ((flags & Flag.endStream) !== 0) {
      this.endStream(streamId, undefined);
      return;
    }
    // A receiver's stream is given back as its caller releases it; padding, which nobody reads, at once.
    this.acknowledge(stream, stream.receiver === undefined ? payload.length : payload.length - data.length);
  }

  /** acknowledge gives `octets` of a stream's window back, in WINDOW_UPDATEs of half a window or more. */
  private acknowledge(stream: OpenStream, octets: number): void {
    stream.unacknowledged += octets;
    if (stream.unacknowledged >= receiveWindow / 2) {
      this.send(frame(FrameType.windowUpdate, 0, stream.id, u32Payload(stream.unacknowledged)));
      stream.unacknowledged = 0;
    }
  }

  private onPingAck(id: bigint): void {
    const onAck = this.pings.get(id);
    if (onAck === undefined) return;
    this.pings.delete(id);
    onAck();
  }

  private onHeaders(flags: number, streamId: number, payload: Buffer): void {
    let fragment: Buffer | undefined = (flags & Flag.padded) !== 0 ? unpadded(payload) : payload;
    if (fragment !== undefined && (flags & Flag.priority) !== 0) fragment = fragment.length >= 5 ? fragment.subarray(5) : undefined;
    if (fragment === undefined) return this.connectionError(ErrorCode.protocolError);
    const endStream = (flags & Flag.endStream) !== 0;
    if ((flags & Flag.endHeaders) === 0) {
      this.headerBlock = { streamId, endStream, fragments: [Buffer.from(fragment)] };
      return;
    }
    this.onHeaderBlock(streamId, endStream, fragment);
  }

  private onContinuation(flags: number, payload: Buffer): void {
    const block = this.headerBlock;
    if (block === undefined) return this.connectionError(ErrorCode.protocolError);
    block.fragments.push(Buffer.from(payload));
    if ((flags & Flag.endHeaders) === 0) return;
    this.headerBlock = undefined;
    this.onHeaderBlock(block.streamId, block.endStream, Buffer.concat(block.fragments));
  }

  private onHeaderBlock(streamId: number, endStream: boolean, block: Buffer): void {
    let fields: HeaderField[];
    try {
      // Decoded whatever stream it is for: the dynamic table must follow every block.
      fields = this.decoder.decode(block);
    } catch (e: unknown) {
      if (e instanceof HpackDecodingError) return this.connectionError(ErrorCode.compressionError);
      throw e;
    }
    const stream = this.streams.get(streamId);
    if (stream === undefined) return;
    const record = headerRecord(fields);
    if (stream.headers === undefined) {
      const status = record[":status"];
      // An informational answer (1xx) precedes the real one.
      if (typeof status === "string" && status.startsWith("1") && !endStream) return;
      stream.headers = record;
      stream.receiver?.onHeaders(record);
    } else {
      stream.trailers = record;
    }
    if (endStream) this.endStream(streamId, undefined);
  }

  private onSettings(flags: number, payload: Buffer): void {
    if ((flags & Flag.ack) !== 0) return;
    if (payload.length % 6 !== 0) return this.connectionError(ErrorCode.frameSizeError);
    for (let offset = 0; offset < payload.length; offset += 6) {
      const id = payload.readUInt16BE(offset);
      const value = payload.readUInt32BE(offset + 2);
      if (id === Setting.maxConcurrentStreams) {
        this.peerMaxConcurrentStreams = value;
      } else if (id === Setting.initialWindowSize) {
        if (value > maxWindowSize) return this.connectionError(ErrorCode.flowControlError);
        // A change applies to every open stream's window, which may go negative (section 6.9.2).
        const delta = value - this.peerInitialWindow;
        this.peerInitialWindow = value;
        for (const stream of this.streams.values()) stream.sendWindow += delta;
      } else if (id === Setting.maxFrameSize) {
        if (value < defaultMaxFrameSize || value > 16_777_215) return this.connectionError(ErrorCode.protocolError);
        this.peerMaxFrameSize = value;
      }
    }
    this.send(frame(FrameType.settings, Flag.ack, 0));
    this.resumeBodies();
    this.startQueued();
  }

  private onWindowUpdate(streamId: number, increment: number): void {
    if (streamId === 0) {
      this.connectionSendWindow += increment;
      if (this.connectionSendWindow > maxWindowSize) return this.connectionError(ErrorCode.flowControlError);
    } else {
      const stream = this.streams.get(streamId);
      if (stream === undefined) return;
      stream.sendWindow += increment;
    }
    this.resumeBodies();
  }

  private resumeBodies(): void {
    for (const stream of this.streams.values()) {
      if (stream.pendingBody !== undefined) this.sendBody(stream);
    }
  }

  private onGoAway(lastProcessed: number): void {
    this.goAwayReceived = true;
    this.goneForNewStreams();
    for (const request of this.queue.splice(0)) {
      if (!request.cancelled) request.onEnd({ kind: "closed", headers: undefined, trailers: undefined, chunks: [], resetCode: ErrorCode.refusedStream, peerGoingAway: true });
    }
    for (const id of [...this.streams.keys()]) {
      if (id > lastProcessed) this.endStream(id, ErrorCode.refusedStream);
    }
    this.afterStreamEnded();
  }

  /** endStream tells a stream's caller how it ended; `resetCode` when a reset ended it. */
  private endStream(streamId: number, resetCode: number | undefined): void {
    const stream = this.streams.get(streamId);
    if (stream === undefined) return;
    this.streams.delete(streamId);
    if (stream.pendingBody !== undefined && resetCode === undefined) {
      // The peer answered before the whole body was sent (section 8.1): the rest is not sent.
      this.send(frame(FrameType.rstStream, 0, streamId, u32Payload(ErrorCode.noError)));
    }
    stream.onEnd({ kind: "closed", headers: stream.headers, trailers: stream.trailers, chunks: stream.chunks, resetCode, peerGoingAway: this.goAwayReceived });
    this.afterStreamEnded();
  }

  private afterStreamEnded(): void {
    if (this.streams.size === 0) this.socket.unref?.();
    this.startQueued();
    // A session going away closes once its last stream is answered.
    if (this.gone && this.streams.size === 0 && this.queue.length === 0 && !this.lost) this.socket.end();
  }

  private goneForNewStreams(): void {
    if (this.gone) return;
    this.gone = true;
    this.events.onGone();
  }

  /** connectionError ends the connection for a peer's protocol violation (section 5.4.1). */
  private connectionError(code: number): void {
    const payload = Buffer.alloc(8);
    payload.writeUInt32BE(code, 4);
    this.send(frame(FrameType.goAway, 0, 0, payload));
    this.flush();
    this.socket.destroy();
    this.connectionLost();
  }

  private connectionLost(): void {
    if (this.lost) return;
    this.lost = true;
    this.pings.clear();
    this.goneForNewStreams();
    const end: StreamEnd = { kind: "connection lost", dialError: this.connected ? undefined : this.dialError };
    const streams = [...this.streams.values()];
    this.streams.clear();
    const queued = this.queue.splice(0);
    for (const stream of streams) stream.onEnd(end);
    for (const request of queued) if (!request.cancelled) request.onEnd(end);
    this.socket.unref?.();
  }
}

/** unpadded is a PADDED frame's payload without its pad length and padding; undefined when the padding does not fit. */
function unpadded(payload: Buffer): Buffer | undefined {
  if (payload.length === 0) return undefined;
  const padLength = payload[0] as number;
  if (padLength >= payload.length) return undefined;
  return payload.subarray(1, payload.length - padLength);
}

function headerRecord(fields: readonly HeaderField[]): HeaderRecord {
  const record: HeaderRecord = {};
  for (const [name, value] of fields) {
    const seen = record[name];
    if (seen === undefined) record[name] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else record[name] = [seen, value];
  }
  return record;
}
