/**
 * HTTP/2 frames (RFC 9113, section 4 and 6): the types, flags, settings and
 * error codes the driver's client uses, and the encoding of a frame. Every
 * frame is a 9-octet header (24-bit length, type, flags, 31-bit stream ID)
 * and its payload.
 */

export const frameHeaderLength = 9;

export const FrameType = {
  data: 0x0,
  headers: 0x1,
  rstStream: 0x3,
  settings: 0x4,
  pushPromise: 0x5,
  ping: 0x6,
  goAway: 0x7,
  windowUpdate: 0x8,
  continuation: 0x9,
} as const;

export const Flag = {
  endStream: 0x1,
  ack: 0x1,
  endHeaders: 0x4,
  padded: 0x8,
  priority: 0x20,
} as const;

export const Setting = {
  enablePush: 0x2,
  maxConcurrentStreams: 0x3,
  initialWindowSize: 0x4,
  maxFrameSize: 0x5,
} as const;

export const ErrorCode = {
  noError: 0x0,
  protocolError: 0x1,
  flowControlError: 0x3,
  frameSizeError: 0x6,
  refusedStream: 0x7,
  cancel: 0x8,
  compressionError: 0x9,
} as const;

/** What every connection starts with, before its SETTINGS (section 3.4). */
export const clientPreface = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/** The protocol's defaults until the peer's SETTINGS say otherwise (section 6.5.2). */
export const defaultInitialWindowSize = 65_535;
export const defaultMaxFrameSize = 16_384;
export const defaultHeaderTableSize = 4_096;
/** The largest window a WINDOW_UPDATE may build (section 6.9.1). */
export const maxWindowSize = 2 ** 31 - 1;

/** encodeFrame writes one frame, header and payload, into `out` at `offset`; returns the offset after it. */
export function encodeFrame(out: Buffer, offset: number, type: number, flags: number, streamId: number, payload: Uint8Array | undefined): number {
  const length = payload?.length ?? 0;
  out[offset] = (length >>> 16) & 0xff;
  out[offset + 1] = (length >>> 8) & 0xff;
  out[offset + 2] = length & 0xff;
  out[offset + 3] = type;
  out[offset + 4] = flags;
  out.writeUInt32BE(streamId & maxWindowSize, offset + 5);
  if (payload !== undefined) out.set(payload, offset + frameHeaderLength);
  return offset + frameHeaderLength + length;
}

/** frame makes one frame as its own buffer. */
export function frame(type: number, flags: number, streamId: number, payload?: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(frameHeaderLength + (payload?.length ?? 0));
  encodeFrame(out, 0, type, flags, streamId, payload);
  return out;
}

/** settingsPayload encodes SETTINGS parameters, 6 octets each. */
export function settingsPayload(settings: readonly (readonly [id: number, value: number])[]): Buffer {
  const out = Buffer.allocUnsafe(settings.length * 6);
  settings.forEach(([id, value], i) => {
    out.writeUInt16BE(id, i * 6);
    out.writeUInt32BE(value, i * 6 + 2);
  });
  return out;
}

/** u32Payload is a 4-octet big-endian payload: a WINDOW_UPDATE's increment, a RST_STREAM's code. */
export function u32Payload(value: number): Buffer {
  const out = Buffer.allocUnsafe(4);
  out.writeUInt32BE(value, 0);
  return out;
}
