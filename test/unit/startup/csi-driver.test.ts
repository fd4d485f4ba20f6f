import { afterEach, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRouterTransport } from "@connectrpc/connect";
import { Controller, ControllerServiceCapability_RPC_Type, Identity, PluginCapability_Service_Type } from "../../../gen/csi/v1/csi_pb";
import { CsiClient } from "../../../src/csi/csi-client";
import { createOperationMetricsInterceptor } from "../../../src/csi/operation-metrics-interceptor";
import { Logger } from "../../../src/log/logger";
import { MetricRegistry } from "../../../src/metrics/metric-registry";
import { driverStartupRetry, startDriver } from "../../../src/startup/csi-driver";
import { Backoff } from "../../../src/util/backoff";

/** startDriver dials the socket before its first call: a listener that accepts and drops every connection stands in for the driver's. */
let listening: { server: Server; dir: string } | undefined;

afterEach(() => {
  listening?.server.close();
  if (listening) rmSync(listening.dir, { recursive: true, force: true });
  listening = undefined;
});

async function listeningSocket(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "csi-driver-"));
  const path = join(dir, "csi.sock");
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(path, resolve));
  listening = { server, dir };
  return path;
}

describe("startDriver", () => {
  it("retries the driver at start-up every second, as upstream", () => {
    const backoff = new Backoff(driverStartupRetry);
    expect(Array.from({ length: 4 }, () => backoff.next())).toEqual([1000, 1000, 1000, 1000]);
  });

  it("names the driver to onDriverName between GetPluginInfo and the capability calls, so their metrics carry the name and Probe's and GetPluginInfo's unknown-driver", async () => {
    const registry = new MetricRegistry({ processMetrics: false });
    const transport = createRouterTransport(
      (router) => {
        router.service(Identity, {
          probe: () => ({}),
          getPluginInfo: () => ({ name: "named.csi.test" }),
          getPluginCapabilities: () => ({ capabilities: [{ type: { case: "service", value: { type: PluginCapability_Service_Type.CONTROLLER_SERVICE } } }] }),
        });
        router.service(Controller, {
          controllerGetCapabilities: () => ({ capabilities: [{ type: { case: "rpc", value: { type: ControllerServiceCapability_RPC_Type.PUBLISH_UNPUBLISH_VOLUME } } }] }),
        });
      },
      { transport: { interceptors: [createOperationMetricsInterceptor({ observer: registry.csiOperations })] } },
    );
    const driver = await startDriver({
      client: new CsiClient(transport),
      socketPath: await listeningSocket(),
      log: new Logger({ verbosity: 0, sink: () => {} }),
      probeTimeoutMs: 1000,
      onDriverName: (name) => registry.csiOperations.setDriver(name, false),
      signal: new AbortController().signal,
    });
    const counted = (await registry.render())
      .split("\n")
      .filter((line) => line.startsWith("csi_sidecar_operations_seconds_count"))
      .map((line) => [/driver_name="([^"]*)"/.exec(line)?.[1], /method_name="([^"]*)"/.exec(line)?.[1]]);
    expect([driver.name, counted]).toEqual([
      "named.csi.test",
      [
        ["unknown-driver", "/csi.v1.Identity/Probe"],
        ["unknown-driver", "/csi.v1.Identity/GetPluginInfo"],
        ["named.csi.test", "/csi.v1.Identity/GetPluginCapabilities"],
        ["named.csi.test", "/csi.v1.Controller/ControllerGetCapabilities"],
      ],
    ]);
  });
});
