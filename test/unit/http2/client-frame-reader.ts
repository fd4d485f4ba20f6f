import { clientPreface } from "../../../src/http2/frames";

/** A frame as the peer reads it. */
export interface SeenFrame {
  readonly type: number;
  readonly flags: number;
  readonly streamId: number;
  readonly payload: Buffer;
}

/**
 * ClientFrameReader reads what an HTTP/2 client writes, as the server side
 * of a test sees it: the preface dropped, the rest cut into whole frames
 * however the writes split them.
 */
export class ClientFrameReader {
  private received = Buffer.alloc(0);
  private prefaceSeen = false;

  /** read takes the next bytes and returns the frames they complete. */
  read(chunk: Buffer): SeenFrame[] {
    this.received = Buffer.concat([this.received, chunk]);
    if (!this.prefaceSeen) {
      if (this.received.length < clientPreface.length) return [];
      this.received = this.received.subarray(clientPreface.length);
      this.prefaceSeen = true;
    }
    const frames: SeenFrame[] = [];
    while (this.received.length >= 9) {
      const length = this.received.readUIntBE(0, 3);
      if (this.received.length < 9 + length) break;
      frames.push({ type: this.received[3] as number, flags: this.received[4] as number, streamId: this.received.readUInt32BE(5) & 0x7fffffff, payload: Buffer.from(this.received.subarray(9, 9 + length)) });
      this.received = this.received.subarray(9 + length);
    }
    return frames;
  }
}
