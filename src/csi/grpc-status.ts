/**
 * The gRPC status of a driver's answer, read from its headers and trailers
 * as connect-node's client reads it (the transport's reference, compared
 * call by call in test/e2e/grpc-transport-conformance.test.ts): the HTTP
 * status and content type first, then `grpc-status-details-bin` when sent
 * (a google.rpc.Status with typed details), else `grpc-status` and the
 * percent-encoded `grpc-message`.
 *
 * Ours rather than connect's own protocol-grpc validateResponse and
 * validateTrailer because those decode google.rpc.Status through a schema
 * whose hydration builds descriptor.proto's descriptors at every start (see
 * src/protobuf/generated-code-runtime.ts); gen/'s Status is the same
 * message. connect's HTTP status mapping and content-type check, which
 * need no schema, are used as they are.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { base64Decode } from "@bufbuild/protobuf/wire";
import { Code, ConnectError } from "@connectrpc/connect";
import { codeFromHttpStatus, parseContentType } from "@connectrpc/connect/protocol-grpc";
import { StatusSchema } from "../../gen/google/rpc/status_pb";

/**
 * statusError is the failure a header or trailer block reports, or
 * undefined when it reports success or no status at all. A status in
 * `grpc-status-details-bin` wins over `grpc-status`; one that cannot be
 * decoded fails the call as DataLoss.
 */
function statusError(block: Headers): ConnectError | undefined {
  const details = block.get("grpc-status-details-bin");
  if (details !== null) {
    let status;
    try {
      status = fromBinary(StatusSchema, base64Decode(details));
    } catch (e: unknown) {
      throw ConnectError.from(e, Code.DataLoss);
    }
    if (status.code === 0) return undefined;
    const error = new ConnectError(status.message, status.code, block);
    // A detail keeps its type's full name (what follows the type URL's last slash) and its bytes, undecoded.
    error.details = status.details.map((any) => ({ type: any.typeUrl.slice(any.typeUrl.lastIndexOf("/") + 1), value: any.value }));
    error.isWireError = true;
    return error;
  }
  const grpcStatus = block.get("grpc-status");
  if (grpcStatus === null || grpcStatus === "0") return undefined;
  const code = Number.parseInt(grpcStatus, 10);
  const error = code in Code ? new ConnectError(decodeURIComponent(block.get("grpc-message") ?? ""), code, block) : new ConnectError(`invalid grpc-status: ${grpcStatus}`, Code.Internal, block);
  error.isWireError = true;
  return error;
}

/**
 * headerStatusError checks the answer's HTTP status and content type, which
 * fail the call at once, and returns the failure its headers report (a
 * trailers-only answer), for the caller to throw once the body is read.
 */
export function headerStatusError(httpStatus: number, header: Headers): ConnectError | undefined {
  if (httpStatus !== 200) throw new ConnectError(`HTTP ${httpStatus}`, codeFromHttpStatus(httpStatus), header);
  const contentType = header.get("content-type");
  if (parseContentType(contentType) === undefined) throw new ConnectError(`unsupported content type ${contentType}`, Code.Unknown);
  return statusError(header);
}

/**
 * checkTrailerStatus throws the failure the trailers report, the headers
 * added to its metadata, and fails an answer that carries a status in
 * neither block.
 */
export function checkTrailerStatus(trailer: Headers, header: Headers): void {
  const error = statusError(trailer);
  if (error !== undefined) {
    header.forEach((value, key) => {
      error.metadata.append(key, value);
    });
    throw error;
  }
  if (!header.has("grpc-status") && !trailer.has("grpc-status")) throw new ConnectError("protocol error: missing status", Code.Internal);
}
