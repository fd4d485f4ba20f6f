// grpc-js service definitions built from the protobuf-es descriptors in
// gen/csi/v1/csi_pb.ts, so the fake driver needs no proto-loader and speaks
// exactly the wire format the attacher's generated client speaks.
import {
  fromBinary,
  toBinary,
  type DescMethod,
  type DescService,
  type Message,
  type MessageShape,
} from "@bufbuild/protobuf";
import type * as grpc from "@grpc/grpc-js";
import { Controller, Identity } from "../../../gen/csi/v1/csi_pb";
import { isCsiMethodName, type CsiMethodName } from "./control-protocol";

/** CSI_SERVICES are the services the fake driver serves. */
export const CSI_SERVICES: readonly DescService[] = [Identity, Controller];

/**
 * ServiceHandlers is the normal behaviour of one service: per method, keyed
 * by its localName ("controllerPublishVolume"), a function from request to
 * response that throws CsiStatusError to fail. Typed per method, so a
 * handler cannot answer with the wrong message.
 */
export type ServiceHandlers<S extends DescService> = {
  [K in keyof S["method"]]: (request: MessageShape<S["method"][K]["input"]>) => MessageShape<S["method"][K]["output"]>;
};

/** NormalHandler is one method's normal behaviour with its types erased, as the wiring sees it. */
export type NormalHandler = (request: Message) => Message;

/**
 * UnaryHandler answers one call; `signal` aborts when the client cancels
 * or its deadline passes.
 */
export type UnaryHandler = (request: Message, signal: AbortSignal) => Promise<Message>;

/**
 * createServiceDefinition turns a protobuf-es service descriptor into the
 * grpc-js definition of the same service: path "/csi.v1.Identity/Probe",
 * binary (de)serialisation through the generated schemas.
 */
export function createServiceDefinition(service: DescService): grpc.ServiceDefinition {
  return Object.fromEntries(
    service.methods.map((method): [string, grpc.MethodDefinition<Message, Message>] => {
      requireUnary(method);
      return [
        method.name,
        {
          path: `/${service.typeName}/${method.name}`,
          requestStream: false,
          responseStream: false,
          requestSerialize: (message: Message) => Buffer.from(toBinary(method.input, message)),
          requestDeserialize: (bytes: Buffer) => fromBinary(method.input, bytes),
          responseSerialize: (message: Message) => Buffer.from(toBinary(method.output, message)),
          responseDeserialize: (bytes: Buffer) => fromBinary(method.output, bytes),
          originalName: method.localName,
        },
      ];
    }),
  );
}

/**
 * normalHandlerFor picks a method's handler out of a ServiceHandlers object
 * with its types erased. The cast is sound because ServiceHandlers has a
 * handler for every method of S, typed with that method's own messages, and
 * the wiring only passes it requests decoded with that method's schema.
 */
export function normalHandlerFor<S extends DescService>(handlers: ServiceHandlers<S>, method: DescMethod): NormalHandler {
  const handler: unknown = (handlers as Record<string, unknown>)[method.localName];
  if (typeof handler !== "function") {
    throw new Error(`no handler for ${method.parent.typeName}.${method.name}`);
  }
  return handler as NormalHandler;
}

/** csiMethodName checks that a descriptor's method is one the control API knows by name. */
export function csiMethodName(method: DescMethod): CsiMethodName {
  if (!isCsiMethodName(method.name)) {
    throw new Error(`method ${method.name} is missing from CSI_METHOD_NAMES`);
  }
  return method.name;
}

/** findCsiMethod returns the descriptor of a served method, for checking scripted responses. */
export function findCsiMethod(name: CsiMethodName): DescMethod {
  for (const service of CSI_SERVICES) {
    const method = service.methods.find((m) => m.name === name);
    if (method !== undefined) {
      return method;
    }
  }
  throw new Error(`no CSI service has a method ${name}`);
}

function requireUnary(method: DescMethod): void {
  // CSI Identity and Controller are all unary; a streaming method would
  // need different grpc-js handler shapes, so refuse rather than misbehave.
  if (method.methodKind !== "unary") {
    throw new Error(`${method.name} is ${method.methodKind}; only unary methods are supported`);
  }
}
