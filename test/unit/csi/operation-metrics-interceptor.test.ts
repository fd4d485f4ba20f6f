import { describe, expect, it } from "bun:test";
import { Code, ConnectError, createClient, createContextValues, createRouterTransport } from "@connectrpc/connect";
import { Controller, Identity } from "../../../gen/csi/v1/csi_pb";
import { createOperationMetricsInterceptor, migratedVolumeKey } from "../../../src/csi/operation-metrics-interceptor";
import type { CsiOperation } from "../../../src/metrics/csi-operation-observer";
import { FakeClock } from "../queue/fake-clock";

/** SteppingClock moves 125 ms at every reading: each call takes 125 ms. */
class SteppingClock extends FakeClock {
  override monotonic(): number {
    this.step(125);
    return super.monotonic();
  }
}

/** A driver whose publish fails with NotFound for volume "missing", and a clock that advances 125 ms per reading. */
function setUp() {
  const operations: CsiOperation[] = [];
  const interceptor = createOperationMetricsInterceptor({
    observer: { observe: (operation) => operations.push(operation) },
    clock: new SteppingClock(0),
  });
  const transport = createRouterTransport(
    (router) => {
      router.service(Identity, {
        probe: () => ({}),
        getPluginInfo: () => ({ name: "fake.csi.test" }),
        getPluginCapabilities: () => ({}),
      });
      router.service(Controller, {
        controllerPublishVolume: (request) => {
          if (request.volumeId === "missing") throw new ConnectError("volume missing not found", Code.NotFound);
          return { publishContext: {} };
        },
      });
    },
    { transport: { interceptors: [interceptor] } },
  );
  return { operations, identity: createClient(Identity, transport), controller: createClient(Controller, transport) };
}

describe("operation metrics interceptor", () => {
  it("reports each call with its full gRPC method, the code name and its duration, start-up calls included", async () => {
    const { operations, identity, controller } = setUp();
    await identity.probe({});
    await controller.controllerPublishVolume({ volumeId: "vol-1", nodeId: "node-1" });
    expect(operations).toEqual([
      { method: "/csi.v1.Identity/Probe", code: "OK", seconds: 0.125, migrated: false },
      { method: "/csi.v1.Controller/ControllerPublishVolume", code: "OK", seconds: 0.125, migrated: false },
    ]);
  });

  it("reports a failed call with Go's code name and rethrows the error untouched", async () => {
    const { operations, controller } = setUp();
    const failure = await controller.controllerPublishVolume({ volumeId: "missing", nodeId: "node-1" }).catch((e: unknown) => e);
    expect([failure instanceof ConnectError && failure.code, operations]).toEqual([
      Code.NotFound,
      [{ method: "/csi.v1.Controller/ControllerPublishVolume", code: "NotFound", seconds: 0.125, migrated: false }],
    ]);
  });

  it("reports a call timed out by its deadline as DeadlineExceeded", async () => {
    const operations: CsiOperation[] = [];
    const transport = createRouterTransport(
      (router) => router.service(Identity, { probe: () => new Promise(() => {}) }),
      { transport: { interceptors: [createOperationMetricsInterceptor({ observer: { observe: (operation) => operations.push(operation) } })] } },
    );
    await createClient(Identity, transport).probe({}, { timeoutMs: 20 }).catch(() => undefined);
    expect(operations.map(({ method, code }) => ({ method, code }))).toEqual([{ method: "/csi.v1.Identity/Probe", code: "DeadlineExceeded" }]);
  });

  it("takes migrated from the call's context values", async () => {
    const { operations, controller } = setUp();
    await controller.controllerPublishVolume({ volumeId: "vol-1", nodeId: "node-1" }, { contextValues: createContextValues().set(migratedVolumeKey, true) });
    expect(operations.map((operation) => operation.migrated)).toEqual([true]);
  });
});
