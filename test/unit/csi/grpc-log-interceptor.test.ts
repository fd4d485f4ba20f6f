import { describe, expect, it } from "bun:test";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { Controller } from "../../../gen/csi/v1/csi_pb";
import { createGrpcLogInterceptor } from "../../../src/csi/grpc-log-interceptor";
import { Logger } from "../../../src/log/logger";

/** A Controller served in memory through the interceptor, and the JSON log lines it wrote. */
function loggedController(options: { verbosity: number; maxLogLength?: number; fail?: boolean }) {
  const lines: Record<string, unknown>[] = [];
  const log = new Logger({ format: "json", verbosity: options.verbosity, sink: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  const transport = createRouterTransport(
    (router) =>
      router.service(Controller, {
        controllerPublishVolume: () => {
          if (options.fail) throw new ConnectError("volume vol-1 not found", Code.NotFound);
          return { publishContext: { devicePath: "/dev/xvdb", token: "not-a-secret-field" } };
        },
      }),
    { transport: { interceptors: [createGrpcLogInterceptor({ log, maxLogLength: options.maxLogLength ?? -1 })] } },
  );
  return { client: createClient(Controller, transport), lines };
}

const request = { volumeId: "vol-1", nodeId: "node-1-id", secrets: { password: "hunter2" } };

/** Each line reduced to its message and payload fields: caller and ts vary. */
function payloads(lines: Record<string, unknown>[]) {
  return lines.map(({ msg, method, request, response, err }) => ({ msg, method, request, response, err }));
}

describe("gRPC logging at -v=5 (csi-lib-utils LogGRPC)", () => {
  it("logs call, request with secrets stripped, response and a nil error", async () => {
    const { client, lines } = loggedController({ verbosity: 5 });
    await client.controllerPublishVolume(request);
    expect(payloads(lines)).toEqual([
      { msg: "GRPC call", method: "/csi.v1.Controller/ControllerPublishVolume", request: undefined, response: undefined, err: undefined },
      { msg: "GRPC request", method: undefined, request: `{"volume_id":"vol-1","node_id":"node-1-id","secrets":"***stripped***"}`, response: undefined, err: undefined },
      { msg: "GRPC response", method: undefined, request: undefined, response: `{"publish_context":{"devicePath":"/dev/xvdb","token":"not-a-secret-field"}}`, err: undefined },
      { msg: "GRPC error", method: undefined, request: undefined, response: undefined, err: null },
    ]);
    expect(JSON.stringify(lines)).not.toContain("hunter2");
  });

  it("logs a failed call's error as Go's gRPC prints it", async () => {
    const { client, lines } = loggedController({ verbosity: 5, fail: true });
    await expect(client.controllerPublishVolume(request)).rejects.toThrow("volume vol-1 not found");
    expect(payloads(lines).slice(2)).toEqual([
      { msg: "GRPC response", method: undefined, request: undefined, response: "{}", err: undefined },
      { msg: "GRPC error", method: undefined, request: undefined, response: undefined, err: "rpc error: code = NotFound desc = volume vol-1 not found" },
    ]);
    expect(JSON.stringify(lines)).not.toContain("hunter2");
  });

  it("caps the response at --max-grpc-log-length and says so", async () => {
    const { client, lines } = loggedController({ verbosity: 5, maxLogLength: 10 });
    await client.controllerPublishVolume(request);
    expect(lines.find((line) => line["msg"] === "GRPC response")?.["response"]).toBe(`{"publish_ [response body too large, log capped to 10 chars]`);
  });

  it("logs nothing below -v=5", async () => {
    const { client, lines } = loggedController({ verbosity: 4 });
    await client.controllerPublishVolume(request);
    expect(lines).toEqual([]);
  });
});
