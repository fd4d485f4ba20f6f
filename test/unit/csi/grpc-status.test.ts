import { describe, expect, it } from "bun:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { base64Encode } from "@bufbuild/protobuf/wire";
import { Code, ConnectError } from "@connectrpc/connect";
import { validateResponse, validateTrailer } from "@connectrpc/connect/protocol-grpc";
import { StatusSchema } from "../../../gen/google/rpc/status_pb";
import { checkTrailerStatus, headerStatusError } from "../../../src/csi/grpc-status";

/** What a caller sees of a status failure: connect-node's transport is the reference for each. */
function seen(run: () => unknown): unknown {
  try {
    const result = run();
    return result instanceof ConnectError ? failure(result) : { returned: result ?? null };
  } catch (e: unknown) {
    if (!(e instanceof ConnectError)) throw e;
    return { thrown: failure(e) };
  }
}

function failure(e: ConnectError): unknown {
  return {
    code: Code[e.code],
    message: e.rawMessage,
    details: e.details.map((detail) => ("type" in detail ? { type: detail.type, value: [...detail.value] } : { desc: detail.desc.typeName })),
    metadata: [...e.metadata.entries()],
    isWireError: e.isWireError,
  };
}

const statusBin = (code: number, message: string, details: { typeUrl: string; value: Uint8Array }[] = []) => base64Encode(toBinary(StatusSchema, create(StatusSchema, { code, message, details })), "std_raw");

/** Header or trailer blocks as drivers send them, and some they should not. */
const blocks: Readonly<Record<string, Record<string, string>>> = {
  ok: { "content-type": "application/grpc", "grpc-status": "0" },
  "no status": { "content-type": "application/grpc" },
  "failure, percent-encoded message": { "content-type": "application/grpc", "grpc-status": "9", "grpc-message": "volume%20is%20busy%3A%20100%25", "x-driver": "a" },
  "failure, no message": { "content-type": "application/grpc", "grpc-status": "14" },
  "unknown code": { "content-type": "application/grpc", "grpc-status": "99", "grpc-message": "odd" },
  "code that is no number": { "content-type": "application/grpc", "grpc-status": "busy" },
  "details win over grpc-status": {
    "content-type": "application/grpc",
    "grpc-status": "2",
    "grpc-message": "ignored",
    "grpc-status-details-bin": statusBin(8, "quota exceeded", [{ typeUrl: "type.googleapis.com/google.rpc.ErrorInfo", value: new Uint8Array([10, 1, 120]) }]),
  },
  "details that say OK": { "content-type": "application/grpc", "grpc-status": "0", "grpc-status-details-bin": statusBin(0, "") },
  "details that cannot be decoded": { "content-type": "application/grpc", "grpc-status": "13", "grpc-status-details-bin": "CP" },
  "+proto content type": { "content-type": "application/grpc+proto", "grpc-status": "5" },
  "content type that is not gRPC's": { "content-type": "text/html", "grpc-status": "5" },
  "no content type": { "grpc-status": "5" },
};

describe("the gRPC status of a driver's answer", () => {
  it("reads each header block's failure as connect-node's client does", () => {
    for (const [name, block] of Object.entries(blocks)) {
      const ours = seen(() => headerStatusError(200, new Headers(block)));
      const theirs = seen(() => validateResponse(200, new Headers(block)).headerError);
      expect({ name, result: ours }).toEqual({ name, result: theirs });
    }
  });

  it("reads each trailer block's failure as connect-node's client does, the headers added to its metadata", () => {
    const header = { "content-type": "application/grpc", "x-header": "h" };
    for (const [name, trailer] of Object.entries(blocks)) {
      const ours = seen(() => checkTrailerStatus(new Headers(trailer), new Headers(header)));
      const theirs = seen(() => validateTrailer(new Headers(trailer), new Headers(header)));
      expect({ name, result: ours }).toEqual({ name, result: theirs });
    }
  });

  it("fails an answer with no status in either block as Internal", () => {
    expect(seen(() => checkTrailerStatus(new Headers(), new Headers({ "content-type": "application/grpc" })))).toMatchObject({ thrown: { code: "Internal", message: "protocol error: missing status" } });
  });

  it("maps an HTTP status other than 200 to a gRPC code as connect-node does", () => {
    for (const status of [400, 401, 403, 404, 429, 500, 502, 503, 504, 302]) {
      const header = new Headers({ "content-type": "text/plain" });
      expect({ status, result: seen(() => headerStatusError(status, header)) }).toEqual({ status, result: seen(() => validateResponse(status, header).headerError) });
    }
    expect(seen(() => headerStatusError(503, new Headers()))).toMatchObject({ thrown: { code: "Unavailable", message: "HTTP 503" } });
  });
});
