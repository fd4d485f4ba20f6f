// Status details (google.rpc.Status) for the fake driver's failures: what a
// gRPC server sends in the `grpc-status-details-bin` trailer when an error
// carries details, so a client's decoding of them can be tested.
import { BinaryWriter } from "@bufbuild/protobuf/wire";

/** StatusDetail is one detail of a failure: an Any of the named message type. */
export interface StatusDetail {
  /** Fully qualified message name, e.g. "google.rpc.ErrorInfo" (the Any's type URL is made from it). */
  readonly type: string;
  /** The message's serialized bytes. */
  readonly value: Uint8Array;
}

/**
 * encodeStatus serializes google.rpc.Status { code = 1, message = 2,
 * details = 3 (Any { type_url = 1, value = 2 }) } by hand: the fake
 * driver has no generated code for google/rpc/status.proto, and three
 * fields do not need it.
 */
export function encodeStatus(code: number, message: string, details: readonly StatusDetail[]): Uint8Array {
  const writer = new BinaryWriter();
  writer.uint32((1 << 3) | 0).int32(code);
  writer.uint32((2 << 3) | 2).string(message);
  for (const detail of details) {
    writer.uint32((3 << 3) | 2).fork();
    writer.uint32((1 << 3) | 2).string(`type.googleapis.com/${detail.type}`);
    writer.uint32((2 << 3) | 2).bytes(detail.value);
    writer.join();
  }
  return writer.finish();
}
