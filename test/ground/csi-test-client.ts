import * as net from "node:net";
import { createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Controller } from "../../gen/csi/v1/csi_pb";

/**
 * csiTestClient talks to a driver from the test's side, for set-up and for
 * checking the driver's state (CreateVolume, ListVolumes). It is independent
 * of the attacher's own CSI client, which is what is under test.
 */
export function csiTestClient(socketPath: string): Client<typeof Controller> {
  const transport = createGrpcTransport({
    baseUrl: "http://localhost",
    nodeOptions: { createConnection: () => net.connect(socketPath) },
  });
  return createClient(Controller, transport);
}
