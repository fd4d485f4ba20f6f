/**
 * Free loopback TCP ports for servers that cannot be told to listen on port 0
 * and report back (etcd and kube-apiserver take fixed ports in their flags).
 */
import { createServer, type Server } from "node:net";

/**
 * freeLoopbackPorts returns one distinct port per name, each free on
 * 127.0.0.1 a moment ago. All listeners stay open until every port is
 * picked, so the kernel never hands out the same port twice in one call.
 * Another process may still take a port before the caller binds it; on a
 * test machine that window is small enough to accept.
 */
export async function freeLoopbackPorts<K extends string>(names: readonly K[]): Promise<Record<K, number>> {
  const servers: Server[] = [];
  try {
    const ports = {} as Record<K, number>;
    for (const name of names) {
      const server = createServer();
      servers.push(server);
      ports[name] = await listenOnAnyPort(server);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }
}

function listenOnAnyPort(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host: "127.0.0.1", port: 0 }, () => {
      const address = server.address();
      if (address === null || typeof address === "string") {
        reject(new Error(`unexpected listener address ${String(address)}`));
        return;
      }
      resolve(address.port);
    });
  });
}
