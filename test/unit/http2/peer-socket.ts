import { Duplex } from "node:stream";
import { ClientFrameReader, type SeenFrame } from "./client-frame-reader";

/**
 * PeerSocket stands for a connection to an HTTP/2 server, for unit tests of
 * the client session and the transport on it: what the client writes is
 * parsed into frames (the preface dropped); `answer` hands it the peer's
 * frames.
 */
export class PeerSocket extends Duplex {
  private readonly reader = new ClientFrameReader();
  readonly frames: SeenFrame[] = [];

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.frames.push(...this.reader.read(chunk));
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
