// The fake CSI driver, exercised over its real sockets with the same
// Connect gRPC transport the attacher uses, so what passes here is what the
// attacher's tests will see.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "bun:test";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Controller,
  ControllerServiceCapability_RPC_Type as Rpc,
  Identity,
  PluginCapability_Service_Type as PluginService,
  VolumeCapability_AccessMode_Mode as AccessMode,
  VolumeCapabilitySchema,
} from "../../../gen/csi/v1/csi_pb";
import { FakeCsiDriverControl } from "../../ground/fake-csi-driver/control-client";
import { launchFakeCsiDriver, type FakeCsiDriver } from "../../ground/fake-csi-driver/launch";
import { readJournal } from "../../ground/fake-csi-driver/state-dir";

interface CsiClients {
  readonly identity: Client<typeof Identity>;
  readonly controller: Client<typeof Controller>;
}

function connect(driver: FakeCsiDriver): CsiClients {
  const transport = createGrpcTransport({
    baseUrl: "http://localhost",
    nodeOptions: { createConnection: () => net.connect(driver.csiSocket) },
  });
  return { identity: createClient(Identity, transport), controller: createClient(Controller, transport) };
}

const mountCapability = create(VolumeCapabilitySchema, {
  accessType: { case: "mount", value: { fsType: "ext4" } },
  accessMode: { mode: AccessMode.SINGLE_NODE_WRITER },
});

function publishRequest(volumeId: string, nodeId: string) {
  return { volumeId, nodeId, volumeCapability: mountCapability };
}

/** rejection resolves with the ConnectError a call failed with, and fails the test if it succeeded. */
async function rejection(call: Promise<unknown>): Promise<{ code: Code; message: string }> {
  try {
    await call;
  } catch (e: unknown) {
    const error = ConnectError.from(e);
    return { code: error.code, message: error.rawMessage };
  }
  throw new Error("expected the call to fail, but it succeeded");
}

describe("fake CSI driver identity", () => {
  it("reports fake.csi.test with CONTROLLER_SERVICE and PUBLISH_UNPUBLISH_VOLUME by default", async () => {
    await using driver = await launchFakeCsiDriver();
    const { identity, controller } = connect(driver);

    expect((await identity.getPluginInfo({})).name).toBe("fake.csi.test");
    const plugin = await identity.getPluginCapabilities({});
    expect(plugin.capabilities.map((c) => c.type.case === "service" && c.type.value.type)).toEqual([
      PluginService.CONTROLLER_SERVICE,
    ]);
    const rpcs = await controller.controllerGetCapabilities({});
    expect(rpcs.capabilities.map((c) => c.type.value?.type)).toEqual([Rpc.PUBLISH_UNPUBLISH_VOLUME]);
  });

  it("reports the name and capabilities given at launch, and changes them through the control API", async () => {
    await using driver = await launchFakeCsiDriver({
      config: { name: "other.csi.test", controllerCapabilities: ["PUBLISH_UNPUBLISH_VOLUME", "LIST_VOLUMES"] },
    });
    const { identity, controller } = connect(driver);

    expect((await identity.getPluginInfo({})).name).toBe("other.csi.test");
    let rpcs = await controller.controllerGetCapabilities({});
    expect(rpcs.capabilities.map((c) => c.type.value?.type)).toEqual([Rpc.PUBLISH_UNPUBLISH_VOLUME, Rpc.LIST_VOLUMES]);

    await driver.control.configure({ controllerCapabilities: [] });
    rpcs = await controller.controllerGetCapabilities({});
    expect(rpcs.capabilities).toEqual([]);
  });

  it("answers Probe ready=true by default, and leaves ready unset or false when configured", async () => {
    await using driver = await launchFakeCsiDriver();
    const { identity } = connect(driver);

    expect((await identity.probe({})).ready).toBe(true);
    await driver.control.configure({ probeReady: null });
    expect((await identity.probe({})).ready).toBeUndefined();
    await driver.control.configure({ probeReady: false });
    expect((await identity.probe({})).ready).toBe(false);
  });
});

describe("fake CSI driver publishing", () => {
  it("publishes any volume to any node and answers the default publish context", async () => {
    await using driver = await launchFakeCsiDriver();
    const { controller } = connect(driver);

    const response = await controller.controllerPublishVolume(publishRequest("vol-1", "node-a"));

    expect(response.publishContext).toEqual({ devicePath: "/dev/fake/vol-1" });
    expect(await driver.control.published()).toEqual({ "vol-1": ["node-a"] });
  });

  it("logs every call with its request, secrets included, and how it ended", async () => {
    await using driver = await launchFakeCsiDriver();
    const { controller } = connect(driver);

    await controller.controllerPublishVolume({ ...publishRequest("vol-1", "node-a"), secrets: { password: "s3cret" } });
    await controller.controllerUnpublishVolume({ volumeId: "vol-1", nodeId: "node-a" });

    const calls = await driver.control.calls();
    expect(calls).toEqual([
      {
        seq: 1,
        method: "ControllerPublishVolume",
        request: {
          volumeId: "vol-1",
          nodeId: "node-a",
          volumeCapability: { mount: { fsType: "ext4" }, accessMode: { mode: "SINGLE_NODE_WRITER" } },
          secrets: { password: "s3cret" },
        },
        code: "OK",
        message: null,
        startedAt: expect.any(String),
        finishedAt: expect.any(String),
      },
      {
        seq: 2,
        method: "ControllerUnpublishVolume",
        request: { volumeId: "vol-1", nodeId: "node-a" },
        code: "OK",
        message: null,
        startedAt: expect.any(String),
        finishedAt: expect.any(String),
      },
    ]);
    expect(await driver.control.calls("ControllerUnpublishVolume")).toEqual(calls.slice(1));
  });

  it("unpublishes idempotently, including volumes and nodes it never heard of", async () => {
    await using driver = await launchFakeCsiDriver();
    const { controller } = connect(driver);
    await controller.controllerPublishVolume(publishRequest("vol-1", "node-a"));
    await controller.controllerPublishVolume(publishRequest("vol-1", "node-b"));

    await controller.controllerUnpublishVolume({ volumeId: "vol-1", nodeId: "node-a" });
    await controller.controllerUnpublishVolume({ volumeId: "vol-1", nodeId: "node-a" });
    await controller.controllerUnpublishVolume({ volumeId: "vol-unknown", nodeId: "node-x" });

    expect(await driver.control.published()).toEqual({ "vol-1": ["node-b"] });
  });

  it("adds and forgets publications behind the caller's back, without logging a CSI call", async () => {
    await using driver = await launchFakeCsiDriver();
    const { controller } = connect(driver);
    await controller.controllerPublishVolume(publishRequest("vol-1", "node-a"));
    await driver.control.clearCalls();

    await driver.control.forgetPublication({ volumeId: "vol-1", nodeId: "node-a" });
    await driver.control.addPublication({ volumeId: "vol-2", nodeId: "node-b" });
    await driver.control.forgetPublication({ volumeId: "vol-unknown", nodeId: "node-x" });

    expect({ published: await driver.control.published(), calls: await driver.control.calls() }).toEqual({
      published: { "vol-1": [], "vol-2": ["node-b"] },
      calls: [],
    });
  });

  it("answers NotFound for a node outside the configured node IDs", async () => {
    await using driver = await launchFakeCsiDriver({ config: { nodeIds: ["node-a"] } });
    const { controller } = connect(driver);

    await controller.controllerPublishVolume(publishRequest("vol-1", "node-a"));
    expect(await rejection(controller.controllerPublishVolume(publishRequest("vol-1", "node-b")))).toEqual({
      code: Code.NotFound,
      message: "node node-b not found",
    });
  });

  it("answers NotFound for a volume not created first when volumes must be created", async () => {
    await using driver = await launchFakeCsiDriver({ config: { requireCreatedVolumes: true } });
    const { controller } = connect(driver);

    expect((await rejection(controller.controllerPublishVolume(publishRequest("vol-1", "node-a")))).code).toBe(
      Code.NotFound,
    );
    await controller.createVolume({ name: "vol-1" });
    await driver.control.addVolume({ volumeId: "vol-2" });
    await controller.controllerPublishVolume(publishRequest("vol-1", "node-a"));
    await controller.controllerPublishVolume(publishRequest("vol-2", "node-a"));
    expect(await driver.control.published()).toEqual({ "vol-1": ["node-a"], "vol-2": ["node-a"] });
  });
});

describe("fake CSI driver scripted answers", () => {
  it("returns a scripted error code once, then behaves normally", async () => {
    await using driver = await launchFakeCsiDriver();
    const { controller } = connect(driver);
    await driver.control.script("ControllerPublishVolume", [{ code: "DeadlineExceeded", message: "backend slow" }]);

    expect(await rejection(controller.controllerPublishVolume(publishRequest("vol-1", "node-a")))).toEqual({
      code: Code.DeadlineExceeded,
      message: "backend slow",
    });
    expect(await driver.control.published()).toEqual({});
    await controller.controllerPublishVolume(publishRequest("vol-1", "node-a"));
    expect((await driver.control.calls()).map((c) => [c.code, c.message])).toEqual([
      ["DeadlineExceeded", "backend slow"],
      ["OK", null],
    ]);
  });

  it("serves an answer `times` times, or on every call when `always`", async () => {
    await using driver = await launchFakeCsiDriver();
    const { identity } = connect(driver);
    await driver.control.script("Probe", [{ code: 14, times: 2 }, { code: "FAILED_PRECONDITION" }]);
    await driver.control.script("GetPluginInfo", [{ code: "Internal", always: true }]);

    const probeCodes: string[] = [];
    for (let i = 0; i < 4; i++) {
      probeCodes.push(
        await identity.probe({}).then(
          () => "OK",
          (e: unknown) => Code[ConnectError.from(e).code],
        ),
      );
    }
    expect(probeCodes).toEqual(["Unavailable", "Unavailable", "FailedPrecondition", "OK"]);
    for (let i = 0; i < 3; i++) {
      expect((await rejection(identity.getPluginInfo({}))).code).toBe(Code.Internal);
    }
    expect(await driver.control.pendingScript()).toEqual({
      GetPluginInfo: [{ code: "Internal", always: true, remaining: "always" }],
    });
  });

  it("applies an answer scripted for one volume only to calls for that volume", async () => {
    await using driver = await launchFakeCsiDriver();
    const { controller } = connect(driver);
    await driver.control.script("ControllerPublishVolume", [{ code: "Aborted", volumeId: "vol-2" }]);

    await controller.controllerPublishVolume(publishRequest("vol-1", "node-a"));
    expect((await rejection(controller.controllerPublishVolume(publishRequest("vol-2", "node-a")))).code).toBe(
      Code.Aborted,
    );
    await controller.controllerPublishVolume(publishRequest("vol-2", "node-a"));
    expect(await driver.control.published()).toEqual({ "vol-1": ["node-a"], "vol-2": ["node-a"] });
  });

  it("holds a hung call until released, then answers it, while other calls go through", async () => {
    await using driver = await launchFakeCsiDriver();
    const { controller } = connect(driver);
    await driver.control.script("ControllerPublishVolume", [{ hang: true }]);

    const publishing = controller.controllerPublishVolume(publishRequest("vol-1", "node-a"));
    const [held] = await driver.control.waitForHung("ControllerPublishVolume");
    const [call] = await driver.control.calls();
    expect(call).toMatchObject({ seq: held?.seq, code: null, finishedAt: null });
    expect(await driver.control.published()).toEqual({});
    await controller.controllerPublishVolume(publishRequest("vol-2", "node-a"));
    expect(await driver.control.published()).toEqual({ "vol-2": ["node-a"] });

    expect(await driver.control.release()).toBe(1);
    expect((await publishing).publishContext).toEqual({ devicePath: "/dev/fake/vol-1" });
    expect(await driver.control.hung()).toEqual([]);
    expect(await driver.control.published()).toEqual({ "vol-2": ["node-a"], "vol-1": ["node-a"] });
  });

  it("fails a released call with the code of its hang answer", async () => {
    await using driver = await launchFakeCsiDriver();
    const { identity } = connect(driver);
    await driver.control.script("Probe", [{ hang: true, code: "Unavailable", message: "went away" }]);

    const probing = rejection(identity.probe({}));
    await driver.control.waitForHung("Probe");
    await driver.control.release("Probe");
    expect(await probing).toEqual({ code: Code.Unavailable, message: "went away" });
  });

  it("logs a call as Canceled when its client gives up while it is delayed", async () => {
    await using driver = await launchFakeCsiDriver();
    const { controller } = connect(driver);
    await driver.control.script("ControllerPublishVolume", [{ delayMs: 60_000 }]);

    const failure = await rejection(controller.controllerPublishVolume(publishRequest("vol-1", "node-a"), { timeoutMs: 200 }));

    expect(failure.code).toBe(Code.DeadlineExceeded);
    const [call] = await driver.control.waitForCalls("ControllerPublishVolume", 1, { finished: true });
    expect(call?.code).toBe("Canceled");
    expect(await driver.control.published()).toEqual({});
  });

  it("replaces whole response fields with a scripted response, null clearing one", async () => {
    await using driver = await launchFakeCsiDriver();
    const { identity, controller } = connect(driver);
    await driver.control.script("ControllerPublishVolume", [{ response: { publishContext: { lun: "7" } } }]);
    await driver.control.script("Probe", [{ response: { ready: null } }]);

    const response = await controller.controllerPublishVolume(publishRequest("vol-1", "node-a"));
    expect(response.publishContext).toEqual({ lun: "7" });
    expect(await driver.control.published()).toEqual({ "vol-1": ["node-a"] });
    expect((await identity.probe({})).ready).toBeUndefined();
    expect((await identity.probe({})).ready).toBe(true);
  });

  it("does the work but still fails when the answer says apply", async () => {
    await using driver = await launchFakeCsiDriver();
    const { controller } = connect(driver);
    await driver.control.script("ControllerPublishVolume", [{ code: "DeadlineExceeded", apply: true }]);

    expect(await rejection(controller.controllerPublishVolume(publishRequest("vol-1", "node-a")))).toEqual({
      code: Code.DeadlineExceeded,
      message: "scripted DeadlineExceeded for ControllerPublishVolume",
    });
    expect(await driver.control.published()).toEqual({ "vol-1": ["node-a"] });
  });

  it("closes the client's connection mid-call on a disconnect answer, and serves the next connection", async () => {
    await using driver = await launchFakeCsiDriver();
    let closedSockets = 0;
    const transport = createGrpcTransport({
      baseUrl: "http://localhost",
      nodeOptions: {
        createConnection: () => net.connect(driver.csiSocket).once("close", () => (closedSockets += 1)),
      },
    });
    const controller = createClient(Controller, transport);
    await driver.control.script("ControllerPublishVolume", [{ delayMs: 50, disconnect: true }]);

    // What the client makes of a vanished connection is the client's business
    // (Bun's http2 leaves the call to its deadline); the driver's part is
    // that the connection is gone and nothing was published.
    await rejection(controller.controllerPublishVolume(publishRequest("vol-1", "node-a"), { timeoutMs: 2_000 }));
    expect(closedSockets).toBe(1);
    expect((await driver.control.calls("ControllerPublishVolume")).map((call) => call.code)).toEqual(["Unavailable"]);
    expect(await driver.control.published()).toEqual({});
    expect((await controller.controllerPublishVolume(publishRequest("vol-1", "node-a"))).publishContext).toEqual({ devicePath: "/dev/fake/vol-1" });
  });

  it("refuses a request larger than maxReceiveMessageBytes with ResourceExhausted, before any handler", async () => {
    await using driver = await launchFakeCsiDriver({ config: { maxReceiveMessageBytes: 1024 } });
    const { controller } = connect(driver);

    const failure = await rejection(
      controller.controllerPublishVolume({ ...publishRequest("vol-big", "node-a"), volumeContext: { blob: "x".repeat(4096) } }),
    );
    expect(failure.code).toBe(Code.ResourceExhausted);
    expect(failure.message).toMatch(/^Received message larger than max \(\d+ vs 1024\)$/);
    expect(await driver.control.calls()).toEqual([]);
    expect((await controller.controllerPublishVolume(publishRequest("vol-small", "node-a"))).publishContext).toEqual({ devicePath: "/dev/fake/vol-small" });
  });

  it("refuses a script with an unknown status code, method or response field", async () => {
    await using driver = await launchFakeCsiDriver();

    await expect(driver.control.script("Probe", [{ code: "Exploded" }])).rejects.toThrow("not a gRPC status code");
    await expect(driver.control.script("Probe", [{ response: { readyy: true } }])).rejects.toThrow('no field "readyy"');
    // @ts-expect-error: the method name is checked at run time too, for callers without types.
    await expect(driver.control.script("Publish", [{}])).rejects.toThrow("400");
    expect(await driver.control.pendingScript()).toEqual({});
  });
});

describe("fake CSI driver ListVolumes", () => {
  it("pages volumes with max_entries and next_token, reporting their published nodes", async () => {
    await using driver = await launchFakeCsiDriver({ config: { controllerCapabilities: ["LIST_VOLUMES"] } });
    const { controller } = connect(driver);
    for (const volumeId of ["vol-1", "vol-2", "vol-3"]) {
      await driver.control.addVolume({ volumeId, nodeIds: volumeId === "vol-2" ? ["node-a", "node-b"] : [] });
    }

    const first = await controller.listVolumes({ maxEntries: 2 });
    const second = await controller.listVolumes({ maxEntries: 2, startingToken: first.nextToken });

    const summary = (page: typeof first) =>
      page.entries.map((e) => [e.volume?.volumeId, e.status?.publishedNodeIds]);
    expect([summary(first), first.nextToken !== ""]).toEqual([[["vol-1", []], ["vol-2", ["node-a", "node-b"]]], true]);
    expect([summary(second), second.nextToken]).toEqual([[["vol-3", []]], ""]);
    expect((await controller.listVolumes({})).entries).toHaveLength(3);
  });

  it("answers Aborted to a starting_token it did not issue", async () => {
    await using driver = await launchFakeCsiDriver();
    const { controller } = connect(driver);

    expect((await rejection(controller.listVolumes({ startingToken: "bogus" }))).code).toBe(Code.Aborted);
    expect((await rejection(controller.listVolumes({ startingToken: "5" }))).code).toBe(Code.Aborted);
  });

  it("answers Unimplemented to RPCs it does not advertise when enforcing capabilities", async () => {
    await using driver = await launchFakeCsiDriver({ config: { enforceCapabilities: true } });
    const { controller } = connect(driver);

    expect((await rejection(controller.listVolumes({}))).code).toBe(Code.Unimplemented);
    await controller.controllerPublishVolume(publishRequest("vol-1", "node-a"));
  });
});

describe("fake CSI driver process", () => {
  it("refuses calls once killed, and serves again with empty state after restart", async () => {
    await using driver = await launchFakeCsiDriver();
    await connect(driver).controller.controllerPublishVolume(publishRequest("vol-1", "node-a"));

    await driver.kill();
    expect((await rejection(connect(driver).identity.probe({}))).code).toBe(Code.Unavailable);

    await driver.restart();
    expect((await connect(driver).identity.probe({})).ready).toBe(true);
    expect(await driver.control.published()).toEqual({});
  });

  it("keeps its volumes and a journal of every finished call across a SIGKILL and restart, with stateDir", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "fake-csi-state-"));
    try {
      await using driver = await launchFakeCsiDriver({ config: { stateDir } });
      await driver.control.script("ControllerPublishVolume", [{ code: "DeadlineExceeded", apply: true, volumeId: "vol-2" }]);
      await connect(driver).controller.controllerPublishVolume(publishRequest("vol-1", "node-a"));
      await rejection(connect(driver).controller.controllerPublishVolume(publishRequest("vol-2", "node-b")));
      const firstPid = driver.pid;
      await driver.restart();
      await connect(driver).controller.controllerUnpublishVolume({ volumeId: "vol-1", nodeId: "node-a" });

      expect(await driver.control.published()).toEqual({ "vol-1": [], "vol-2": ["node-b"] });
      expect(
        readJournal(stateDir).map(({ pid, method, code, applied, request }) => ({ first: pid === firstPid, method, code, applied, volumeId: request["volumeId"] })),
      ).toEqual([
        { first: true, method: "ControllerPublishVolume", code: "OK", applied: true, volumeId: "vol-1" },
        { first: true, method: "ControllerPublishVolume", code: "DeadlineExceeded", applied: true, volumeId: "vol-2" },
        { first: false, method: "ControllerUnpublishVolume", code: "OK", applied: true, volumeId: "vol-1" },
      ]);
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  });

  it("removes its sockets and temporary directory on dispose, but keeps a given directory", async () => {
    const given = await mkdtemp(join(tmpdir(), "fake-csi-test-"));
    try {
      let ownDirectory: string;
      {
        await using own = await launchFakeCsiDriver();
        await using inGiven = await launchFakeCsiDriver({ directory: given });
        ownDirectory = own.directory;
        expect(existsSync(own.csiSocket) && existsSync(inGiven.controlSocket)).toBe(true);
      }
      expect(existsSync(ownDirectory)).toBe(false);
      expect(await readdir(given)).toEqual([]);
    } finally {
      await rm(given, { recursive: true, force: true });
    }
  });

  it("returns to its launch state on reset, failing held calls with Unavailable", async () => {
    await using driver = await launchFakeCsiDriver({ config: { name: "launch.csi.test" } });
    const { identity, controller } = connect(driver);
    await controller.controllerPublishVolume(publishRequest("vol-1", "node-a"));
    await driver.control.configure({ name: "changed.csi.test" });
    await driver.control.script("Probe", [{ hang: true }, { code: "Internal" }]);
    const probing = rejection(identity.probe({}));
    await driver.control.waitForHung("Probe");

    await driver.control.reset();

    expect((await probing).code).toBe(Code.Unavailable);
    expect((await identity.getPluginInfo({})).name).toBe("launch.csi.test");
    expect((await identity.probe({})).ready).toBe(true);
    expect(await driver.control.published()).toEqual({});
    expect((await driver.control.calls()).map((c) => c.method)).toEqual(["GetPluginInfo", "Probe"]);
  });

  it("exits when its stdin closes, so a killed test run leaves no driver behind", async () => {
    const directory = await mkdtemp(join(tmpdir(), "fake-csi-test-"));
    try {
      const control = new FakeCsiDriverControl(join(directory, "control.sock"));
      const main = join(import.meta.dir, "../../ground/fake-csi-driver/main.ts");
      const child = Bun.spawn(
        [process.execPath, "run", main, "--socket", join(directory, "csi.sock"), "--control", control.socketPath, "--exit-with-stdin"],
        { stdin: "pipe", stdout: "ignore", stderr: "ignore" },
      );
      await control.waitFor("the driver to start", {}, () => control.healthz().catch(() => undefined));

      await child.stdin.end();

      expect(await child.exited).toBe(0);
      expect(await readdir(directory)).toEqual([]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it("fails to launch with the driver's own error when the configuration is invalid", async () => {
    // @ts-expect-error: an unknown capability, as a caller without types could send.
    const launching = launchFakeCsiDriver({ config: { controllerCapabilities: ["PUBLISH"] } });
    await expect(launching).rejects.toThrow("not a controller capability");
  });
});
