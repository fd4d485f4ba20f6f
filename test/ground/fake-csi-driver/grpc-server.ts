// The fake driver's gRPC endpoint: a grpc-js server on a Unix socket
// serving CSI Identity and Controller through the fault-injection layer.
//
// grpc-js runs under Bun as it is. Checked with Bun 1.4.5 and grpc-js
// 1.14.7: binding "unix:///path" works (grpc-js listens through node:http2
// and node:net, which Bun implements), and both a grpc-js client and the
// attacher's connect-node transport get answers, error statuses with their
// messages, and cancellations across processes. So the driver runs with
// `bun run` and needs no `bun build --target=node` detour.
import type { DescService, Message } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { EventEmitter } from "node:events";
import type { Http2Session } from "node:http2";
import { Controller, Identity } from "../../../gen/csi/v1/csi_pb";
import { createControllerHandlers } from "./controller-service";
import type { DriverState } from "./driver-state";
import { CsiStatusError } from "./errors";
import { createFaultInjectingHandler } from "./fault-injection";
import { createIdentityHandlers } from "./identity-service";
import { encodeStatus } from "./status-details";
import {
  createServiceDefinition,
  csiMethodName,
  normalHandlerFor,
  type ServiceHandlers,
  type UnaryHandler,
} from "./service-definitions";

/** CsiServer is the running gRPC endpoint of the fake driver. */
export interface CsiServer {
  /** stop closes the socket and ends calls in flight at once, as a dying driver does. */
  stop(): void;
}

/**
 * startCsiServer serves CSI on `socketPath` (a path, not a URL) and
 * resolves once the socket accepts connections. The socket file must not
 * exist; main.ts removes a stale one first.
 */
export async function startCsiServer(socketPath: string, state: DriverState): Promise<CsiServer> {
  const { maxReceiveMessageBytes } = state.config;
  const server = new grpc.Server(maxReceiveMessageBytes === null ? {} : { "grpc.max_receive_message_length": maxReceiveMessageBytes });
  addService(server, Identity, createIdentityHandlers(state), state);
  addService(server, Controller, createControllerHandlers(state), state);
  await new Promise<void>((resolve, reject) => {
    server.bindAsync(`unix://${socketPath}`, grpc.ServerCredentials.createInsecure(), (error) => {
      if (error === null) {
        resolve();
      } else {
        reject(error);
      }
    });
  });
  state.onDisconnect(() => {
    for (const session of openSessions(server)) session.destroy();
  });
  return { stop: () => server.forceShutdown() };
}

/**
 * openSessions lists the server's HTTP/2 sessions, one per client
 * connection. grpc-js offers no public way to drop a client without
 * shutting down, so this reads its private session map (grpc-js 1.14:
 * `Server.sessions`, keyed by session); a grpc-js upgrade that renames it
 * makes the `disconnect` unit test fail rather than pass silently.
 */
function openSessions(server: grpc.Server): Http2Session[] {
  const sessions: unknown = Reflect.get(server, "sessions");
  if (!(sessions instanceof Map)) throw new Error("grpc-js Server has no private sessions map any more: update openSessions");
  return [...sessions.keys()].filter((session): session is Http2Session => session instanceof EventEmitter && "destroy" in session);
}

function addService<S extends DescService>(
  server: grpc.Server,
  service: S,
  handlers: ServiceHandlers<S>,
  state: DriverState,
): void {
  const implementation: grpc.UntypedServiceImplementation = {};
  for (const method of service.methods) {
    const handler = createFaultInjectingHandler(method, csiMethodName(method), normalHandlerFor(handlers, method), state);
    implementation[method.name] = toGrpcHandler(handler);
  }
  server.addService(createServiceDefinition(service), implementation);
}

/**
 * toGrpcHandler adapts a promise-returning handler to grpc-js's callback
 * style, and turns the call's "cancelled" event (client cancel, deadline
 * passed, connection lost) into an AbortSignal for scripted waits.
 */
function toGrpcHandler(handler: UnaryHandler): grpc.handleUnaryCall<Message, Message> {
  return (call, callback) => {
    const abort = new AbortController();
    call.on("cancelled", () => abort.abort());
    handler(call.request, abort.signal).then(
      (response) => callback(null, response),
      (e: unknown) => {
        const error = CsiStatusError.from(e);
        const metadata = new grpc.Metadata();
        // As grpc-go's status.WithDetails: the whole status again, details included, in a binary trailer.
        if (error.details.length > 0) metadata.set("grpc-status-details-bin", Buffer.from(encodeStatus(error.code, error.message, error.details)));
        callback({ code: error.code, details: error.message, metadata });
      },
    );
  };
}
