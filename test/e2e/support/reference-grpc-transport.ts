import * as net from "node:net";
import { Code, ConnectError, type Interceptor, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";

/**
 * referenceGrpcTransport is the attacher's CSI transport as it was before
 * issue 25: connect-node's `createGrpcTransport` over the driver's socket,
 * with the connection-loss rule it carried (Bun's http2 client ends the
 * streams of a closing connection with NO_ERROR and no answer, which
 * connect-node would wait out, so a call in flight when a connection
 * closes fails at once as Unavailable). The conformance test holds our own
 * transport to what this one answers.
 */
export function referenceGrpcTransport(socketPath: string, interceptors: Interceptor[] = []): Transport {
  let connectionClosed = new AbortController();
  const untilConnectionCloses = (signal: AbortSignal | undefined): AbortSignal =>
    signal === undefined ? connectionClosed.signal : AbortSignal.any([signal, connectionClosed.signal]);
  const transport = createGrpcTransport({
    baseUrl: "http://localhost",
    idleConnectionTimeoutMs: Number.POSITIVE_INFINITY,
    interceptors,
    nodeOptions: {
      createConnection: () => {
        const socket = net.connect(socketPath);
        socket.once("close", () => {
          const closed = connectionClosed;
          connectionClosed = new AbortController();
          closed.abort(new ConnectError("connection to the CSI driver closed during the call", Code.Unavailable));
        });
        return socket;
      },
    },
  });
  return {
    unary: (method, signal, timeoutMs, header, input, contextValues) => transport.unary(method, untilConnectionCloses(signal), timeoutMs, header, input, contextValues),
    stream: (method, signal, timeoutMs, header, input, contextValues) => transport.stream(method, untilConnectionCloses(signal), timeoutMs, header, input, contextValues),
  };
}
