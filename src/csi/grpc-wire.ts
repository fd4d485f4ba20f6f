import { fromBinary, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type UnaryRequest, type UnaryResponse } from "@connectrpc/connect";
import type { HeaderRecord } from "../http2/client-session";
import type { HeaderField } from "../http2/hpack-decoder";
import { checkTrailerStatus, headerStatusError } from "./grpc-status";

// What a unary gRPC call puts on an HTTP/2 stream and how its answer reads
// back, for createUnaryGrpcTransport: the envelope, the checks of an answer
// in connect-node's order and words, and the errors of streams and sockets
// as connect-node classifies them.

/**
 * requestHeaderFields is the call's header block: the pseudo-headers of a
 * POST to the method's path (the origin is a placeholder: the connection
 * is a socket), then the call's headers, which interceptors may have
 * changed.
 */
export function requestHeaderFields(req: UnaryRequest): HeaderField[] {
  const path = req.url.slice(req.url.indexOf("/", req.url.indexOf("//") + 2));
  const fields: HeaderField[] = [
    [":method", "POST"],
    [":scheme", "http"],
    [":authority", "localhost"],
    [":path", path],
  ];
  req.header.forEach((value, key) => {
    fields.push([key, value]);
  });
  return fields;
}

/** encodeEnvelope serializes the message behind gRPC's 5-byte prefix (no compression flag, big-endian length), in one buffer. */
export function encodeEnvelope<I extends DescMessage>(schema: I, message: MessageShape<I>): Buffer {
  let bytes: Uint8Array;
  try {
    bytes = toBinary(schema, message);
  } catch (e: unknown) {
    throw new ConnectError(`serialize binary: ${e instanceof Error ? e.message : String(e)}`, Code.Internal);
  }
  const envelope = Buffer.allocUnsafe(5 + bytes.byteLength);
  envelope[0] = 0;
  envelope.writeUInt32BE(bytes.byteLength, 1);
  envelope.set(bytes, 5);
  return envelope;
}

/**
 * readAnswer checks a finished stream's answer in connect-node's order and
 * with its words: HTTP status and content type, the envelopes of the body,
 * the trailers, then a status sent in the headers (trailers-only).
 */
export function readAnswer<I extends DescMessage, O extends DescMessage>(req: UnaryRequest<I, O>, receivedHeaders: HeaderRecord, chunks: readonly Buffer[], receivedTrailers: HeaderRecord | undefined): UnaryResponse<I, O> {
  const header = webHeaders(receivedHeaders);
  const trailer = receivedTrailers === undefined ? new Headers() : webHeaders(receivedTrailers);
  const headerError = headerStatusError(Number(receivedHeaders[":status"] ?? 0), header);
  const encoding = header.get("grpc-encoding");
  if (encoding !== null && encoding.toLowerCase() !== "identity") {
    throw new ConnectError(`unsupported response encoding "${encoding}"`, Code.Internal, header);
  }
  const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
  let message: MessageShape<O> | undefined;
  let offset = 0;
  while (body.byteLength - offset >= 5) {
    const length = body.readUInt32BE(offset + 1);
    if (body.byteLength - offset - 5 < length) break;
    if (((body[offset] as number) & 0x01) === 0x01) {
      throw new ConnectError("received compressed envelope, but do not know how to decompress", Code.Internal);
    }
    if (message !== undefined) {
      throw new ConnectError("protocol error: received extra output message for unary method", Code.Unimplemented);
    }
    message = parseMessage(req.method.output, body.subarray(offset + 5, offset + 5 + length));
    offset += 5 + length;
  }
  if (offset < body.byteLength) {
    throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
  }
  checkTrailerStatus(trailer, header);
  if (message === undefined) {
    // Trailers-only: the status came in the headers.
    if (headerError !== undefined) throw headerError;
    throw new ConnectError("protocol error: missing output message for unary method", trailer.has("grpc-status") ? Code.Unimplemented : Code.Unknown);
  }
  if (headerError !== undefined) {
    throw new ConnectError("protocol error: received output message for unary method with error status", Code.Unknown);
  }
  return { stream: false, service: req.method.parent, method: req.method, header, message, trailer };
}

function parseMessage<O extends DescMessage>(schema: O, bytes: Uint8Array): MessageShape<O> {
  try {
    return fromBinary(schema, bytes);
  } catch (e: unknown) {
    throw new ConnectError(`parse binary: ${e instanceof Error ? e.message : String(e)}`, Code.Internal);
  }
}

/** webHeaders turns received header fields into fetch Headers, pseudo-headers left out, as connect-node does. */
function webHeaders(receivedHeaders: HeaderRecord): Headers {
  const headers = new Headers();
  for (const key in receivedHeaders) {
    if (key.startsWith(":")) continue;
    const value = receivedHeaders[key];
    if (value === undefined) continue;
    if (Array.isArray(value)) {
      for (const item of value) headers.append(key, item);
    } else {
      headers.append(key, String(value));
    }
  }
  return headers;
}

/** The HTTP/2 error codes of RFC 9113 section 7, by number. */
const h2ErrorNames: Readonly<Record<number, string>> = {
  1: "PROTOCOL_ERROR",
  2: "INTERNAL_ERROR",
  3: "FLOW_CONTROL_ERROR",
  4: "SETTINGS_TIMEOUT",
  6: "FRAME_SIZE_ERROR",
  7: "REFUSED_STREAM",
  8: "CANCEL",
  9: "COMPRESSION_ERROR",
  10: "CONNECT_ERROR",
  11: "ENHANCE_YOUR_CALM",
  12: "INADEQUATE_SECURITY",
  13: "HTTP_1_1_REQUIRED",
};

/**
 * The gRPC code of a stream reset by its error code, as gRPC's
 * PROTOCOL-HTTP2.md maps them (connect-node's mapping). NO_ERROR and
 * STREAM_CLOSED carry no failure of their own.
 */
function resetCodeToGrpc(rstCode: number): Code | undefined {
  switch (rstCode) {
    case 1:
    case 2:
    case 3:
    case 4:
    case 6:
    case 9:
    case 10:
      return Code.Internal;
    case 7:
      return Code.Unavailable;
    case 8:
      return Code.Canceled;
    case 11:
      return Code.ResourceExhausted;
    case 12:
    case 13:
      return Code.PermissionDenied;
    default:
      return undefined;
  }
}

export function errorFromResetCode(rstCode: number | undefined): ConnectError | undefined {
  if (rstCode === undefined) return undefined;
  const code = resetCodeToGrpc(rstCode);
  if (code === undefined) return undefined;
  return new ConnectError(`http/2 stream closed with error code ${h2ErrorNames[rstCode]} (0x${rstCode.toString(16)})`, code);
}

/** The system error codes that say the peer is not there (connect-node's list). */
const unavailableErrnos = new Set(["ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED"]);
/** The ones that say a stream or connection was cut under a call. */
const abortedErrnos = new Set(["ERR_STREAM_WRITE_AFTER_END", "ERR_STREAM_DESTROYED", "ERR_HTTP2_INVALID_STREAM", "ECONNRESET"]);

/**
 * connectErrorFromSocket classifies an error of the socket or the session
 * as connect-node does, by the Node error codes in its cause chain: a
 * refused dial is Unavailable, a cut stream Aborted, anything else Internal;
 * the message is the error's own.
 */
export function connectErrorFromSocket(reason: unknown): ConnectError {
  if (reason instanceof ConnectError) return reason;
  const codes: string[] = [];
  const seen = new Set<unknown>();
  for (let e: unknown = reason; e instanceof Error && !seen.has(e); e = e.cause) {
    seen.add(e);
    if ("code" in e && typeof e.code === "string") codes.push(e.code);
  }
  const code = codes.some((c) => abortedErrnos.has(c)) ? Code.Aborted : codes.some((c) => unavailableErrnos.has(c)) ? Code.Unavailable : Code.Internal;
  const error = ConnectError.from(reason, code);
  if (error !== reason) error.cause = reason;
  return error;
}
