import { Duplex } from "node:stream";
import { clientPreface } from "../../../src/http2/frames";

/** A frame as the peer reads it. */
export interface SeenFrame {
  readonly type: number;
  readonly flags: number;
  readonly streamId: number;
  readonly payload: Buffer;
}

/**
 * PeerSocket stands for a connection to an HTTP/2 server, for unit tests of
 * the client session and the transport on it: what the client writes is
 * parsed into frames (the preface dropped); `answer` hands it the peer's
 * frames.
 */
export class PeerSocket extends Duplex {
  private written = Buffer.alloc(0);
  readonly frames: SeenFrame[] = [];

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.written = Buffer.concat([this.written, chunk]);
    if (this.written.subarray(0, clientPreface.length).equals(clientPreface)) this.written = this.written.subarray(clientPreface.length);
    while (this.written.length >= 9) {
      const length = this.written.readUIntBE(0, 3);
      if (this.written.length < 9 + length) break;
      this.frames.push({ type: this.written[3] as number, flags: this.written[4] as number, streamId: this.written.readUInt32BE(5), payload: Buffer.from(this.written.subarray(9, 9 + length)) });
      this.written = this.written.subarray(9 + length);
    }
    done();
  }

  override _read(): void {}

  answer(...frames: Buffer[]): void {
    this.push(Buffer.concat(frames));
  }

  framesOf(type: number): SeenFrame[] {
    return this.frames.filter((f) => f.type === type);
  }
}
