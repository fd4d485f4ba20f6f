import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import * as http2 from "node:http2";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toJson, type DescMessage, type DescMethodUnary, type JsonValue, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor, type Transport } from "@connectrpc/connect";
import { Controller, Identity } from "../../gen/csi/v1/csi_pb";
import { CsiClient } from "../../src/csi/csi-client";
import { CsiCallError } from "../../src/csi/errors";
import { createUnaryGrpcTransport } from "../../src/csi/unary-grpc-transport";
import { ensureComponents } from "../ground/components";
import { startMockCsiDriver, type MockCsiDriver } from "../ground/mock-csi-driver";
import { launchFakeCsiDriver, type FakeCsiDriver } from "../ground/fake-csi-driver/launch";
import { referenceGrpcTransport } from "./support/reference-grpc-transport";

/**
 * The attacher's own unary gRPC transport (src/csi/unary-grpc-transport.ts)
 * answers every call as connect-node's `createGrpcTransport` did (with the
 * connection-loss rule the attacher put around it): the same calls go
 * through both, against the grpc-js fault driver and Kubernetes' mock
 * driver (grpc-go), and each outcome (response message, headers and
 * trailers, or error code, message, details and metadata, and what an
 * interceptor saw) must be identical. Each case also checks the reference's
 * outcome is the one the case is about, so two transports broken alike fail.
 */

/** What one call came to, in a form `toEqual` can compare across transports. */
type Outcome =
  | { readonly ok: true; readonly response: JsonValue; readonly header: string[][]; readonly trailer: string[][] }
  | { readonly ok: false; readonly code: string; readonly message: string; readonly details: { type: string; value: string }[]; readonly metadata: string[][] };

/** The interceptor's record of one call: what it was given and what came back. */
interface Seen {
  readonly url: string;
  readonly timeout: string | null;
  readonly stream: boolean;
  readonly result: string;
}

/** A transport under comparison, with what its interceptor saw. */
interface Side {
  readonly transport: Transport;
  readonly seen: Seen[];
}

// The server's clock; the only header that may differ between two answers.
const volatileHeaders = new Set(["date"]);

function entries(headers: Headers): string[][] {
  return [...headers].filter(([key]) => !volatileHeaders.has(key));
}

function recordingInterceptor(seen: Seen[]): Interceptor {
  return (next) => async (req) => {
    const record = (result: string) => seen.push({ url: req.url, timeout: req.header.get("grpc-timeout"), stream: req.stream, result });
    try {
      const res = await next(req);
      record("ok");
      return res;
    } catch (e: unknown) {
      record(e instanceof ConnectError ? Code[e.code] : "not a ConnectError");
      throw e;
    }
  };
}

function side(make: (interceptors: Interceptor[]) => Transport): Side {
  const seen: Seen[] = [];
  return { transport: make([recordingInterceptor(seen)]), seen };
}

async function outcome<I extends DescMessage, O extends DescMessage>(transport: Transport, method: DescMethodUnary<I, O>, input: MessageInitShape<I>, timeoutMs = 10_000): Promise<Outcome> {
  try {
    const res = await transport.unary(method, undefined, timeoutMs, undefined, input);
    return { ok: true, response: toJson(method.output, res.message), header: entries(res.header), trailer: entries(res.trailer) };
  } catch (e: unknown) {
    if (!(e instanceof ConnectError)) throw e;
    return {
      ok: false,
      code: Code[e.code],
      message: e.rawMessage,
      // Details read from the wire carry their type name and bytes.
      details: e.details.map((detail) => ("type" in detail ? { type: detail.type, value: Buffer.from(detail.value).toString("base64") } : { type: detail.desc.typeName, value: "" })),
      metadata: entries(e.metadata),
    };
  }
}

/**
 * same makes one call through the reference and then through ours, each
 * after `prepare` (which scripts the driver, as scripts are used up per
 * call), and expects identical outcomes and interceptor records; it returns
 * the reference's outcome for the case's own expectations.
 */
async function same(reference: Side, ours: Side, call: (transport: Transport) => Promise<Outcome>, prepare: () => Promise<void> = () => Promise.resolve()): Promise<Outcome> {
  const before = [reference.seen.length, ours.seen.length] as const;
  await prepare();
  const expected = await call(reference.transport);
  await prepare();
  const actual = await call(ours.transport);
  expect(actual).toEqual(expected);
  expect(ours.seen.slice(before[1])).toEqual(reference.seen.slice(before[0]));
  return expected;
}

function failure(result: Outcome): { code: string; message: string } {
  if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result.response).slice(0, 200)}`);
  return { code: result.code, message: result.message };
}

/** trailersOnly asks the driver once by hand whether it sends this failure's status in the headers (a trailers-only answer). */
function trailersOnly(socketPath: string, path: string, body: Uint8Array): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const session = http2.connect("http://localhost", { createConnection: () => net.connect(socketPath) });
    session.on("error", reject);
    const stream = session.request({ ":method": "POST", ":path": path, "content-type": "application/grpc", te: "trailers" });
    stream.on("response", (headers, flags) => {
      // END_STREAM (0x1) on the HEADERS frame with a status in it.
      resolve(headers["grpc-status"] !== undefined && (flags & 0x1) === 0x1);
      session.destroy();
    });
    stream.on("error", reject);
    const envelope = Buffer.alloc(5 + body.byteLength);
    envelope.writeUInt32BE(body.byteLength, 1);
    envelope.set(body, 5);
    stream.end(envelope);
  });
}

const publish = Controller.method.controllerPublishVolume;
const unpublish = Controller.method.controllerUnpublishVolume;
const mountCapability = { accessType: { case: "mount", value: { fsType: "ext4" } }, accessMode: { mode: 1 } } as const;
/** Over 1 MiB, so every such message spans many 16 KiB frames and HTTP/2 flow-control windows. */
const bigText = (fill: string) => fill.repeat(1536 * 1024);
/** A method on a service neither driver registers, for Unimplemented from the server itself. */
const unknownServiceMethod: DescMethodUnary<typeof Identity.method.probe.input, typeof Identity.method.probe.output> = {
  ...Identity.method.probe,
  parent: { ...Identity, typeName: "csi.v1.GroupController" },
};

/** The status codes a driver can answer with (1-16, OK aside). */
const errorCodes = Object.values(Code).filter((value): value is Code => typeof value === "number");

describe("our unary gRPC transport against connect-node's, on the grpc-js fault driver", () => {
  let driver: FakeCsiDriver;
  let reference: Side;
  let ours: Side;

  beforeAll(async () => {
    driver = await launchFakeCsiDriver({ config: { maxReceiveMessageBytes: 3 * 1024 * 1024 } });
    reference = side((interceptors) => referenceGrpcTransport(driver.csiSocket, interceptors));
    ours = side((interceptors) => createUnaryGrpcTransport({ createConnection: () => net.connect(driver.csiSocket), interceptors }));
  });

  afterAll(async () => {
    await driver?.[Symbol.asyncDispose]();
  });

  it("answers a publish and an unpublish with the same message, headers and trailers", async () => {
    const published = await same(reference, ours, (t) => outcome(t, publish, { volumeId: "vol-ok", nodeId: "node-a", volumeCapability: mountCapability, volumeContext: { a: "b" } }));
    expect(published.ok).toBe(true);
    const unpublished = await same(reference, ours, (t) => outcome(t, unpublish, { volumeId: "vol-ok", nodeId: "node-a" }));
    expect(unpublished.ok).toBe(true);
  });

  it("fails with every gRPC error code, its message percent-decoded, as connect-node does", async () => {
    for (const code of errorCodes) {
      const message = `scripted ${Code[code]}: ünïcode, 100% sure\ttab`;
      const result = await same(
        reference,
        ours,
        (t) => outcome(t, publish, { volumeId: `vol-${code}`, nodeId: "node-a", volumeCapability: mountCapability }),
        () => driver.control.script("ControllerPublishVolume", [{ code, message }]),
      );
      expect(failure(result)).toEqual({ code: Code[code], message });
    }
  });

  it("reads a failure the driver sends trailers-only (its status in the headers)", async () => {
    await driver.control.script("ControllerUnpublishVolume", [{ code: "NotFound" }]);
    // The premise: grpc-js answers this failure with headers only.
    expect(await trailersOnly(driver.csiSocket, "/csi.v1.Controller/ControllerUnpublishVolume", new Uint8Array())).toBe(true);
    const result = await same(
      reference,
      ours,
      (t) => outcome(t, unpublish, { volumeId: "vol-trailers-only", nodeId: "node-a" }),
      () => driver.control.script("ControllerUnpublishVolume", [{ code: "NotFound", message: "no such volume" }]),
    );
    expect(failure(result)).toEqual({ code: "NotFound", message: "no such volume" });
  });

  it("decodes status details from grpc-status-details-bin", async () => {
    const errorInfo = Buffer.from("\n\x06reason\x12\x0ecsi.test/quota").toString("base64");
    const result = await same(
      reference,
      ours,
      (t) => outcome(t, publish, { volumeId: "vol-details", nodeId: "node-a", volumeCapability: mountCapability }),
      () => driver.control.script("ControllerPublishVolume", [{ code: "ResourceExhausted", message: "quota", details: [{ type: "google.rpc.ErrorInfo", value: errorInfo }] }]),
    );
    expect(result.ok ? [] : result.details).toEqual([{ type: "google.rpc.ErrorInfo", value: errorInfo }]);
  });

  it("fails a call past its deadline as DeadlineExceeded, and the CSI client words it as Go does", async () => {
    const prepare = () => driver.control.script("ControllerPublishVolume", [{ delayMs: 2_000 }]);
    const call = (t: Transport) => outcome(t, publish, { volumeId: "vol-slow", nodeId: "node-a", volumeCapability: mountCapability }, 200);
    // Which of the two deadlines words the failure (our timer, or the
    // driver's own from grpc-timeout) is a race between processes: only the code is compared here.
    await prepare();
    const expected = await call(reference.transport);
    await prepare();
    const actual = await call(ours.transport);
    expect(failure(actual).code).toBe("DeadlineExceeded");
    expect(failure(actual).code).toBe(failure(expected).code);
    const messages: string[] = [];
    for (const { transport } of [reference, ours]) {
      await prepare();
      const error = await new CsiClient(transport).controllerPublish({ volumeId: "vol-slow", nodeId: "node-a", volumeCapability: mountCapability }, 200).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(CsiCallError);
      messages.push((error as CsiCallError).message);
    }
    expect(messages).toEqual(["rpc error: code = DeadlineExceeded desc = context deadline exceeded", "rpc error: code = DeadlineExceeded desc = context deadline exceeded"]);
  });

  it("carries a request and an answer of over 1 MiB, and refuses one over the driver's limit as ResourceExhausted", async () => {
    const sent = await same(reference, ours, (t) => outcome(t, publish, { volumeId: "vol-big-request", nodeId: "node-a", volumeCapability: mountCapability, volumeContext: { big: bigText("r") } }));
    expect(sent.ok).toBe(true);
    const received = await same(
      reference,
      ours,
      (t) => outcome(t, publish, { volumeId: "vol-big-answer", nodeId: "node-a", volumeCapability: mountCapability }),
      () => driver.control.script("ControllerPublishVolume", [{ response: { publishContext: { big: bigText("a") } } }]),
    );
    expect(received.ok && received.response).toEqual({ publishContext: { big: bigText("a") } });
    const refused = await same(reference, ours, (t) => outcome(t, publish, { volumeId: "vol-too-big", nodeId: "node-a", volumeCapability: mountCapability, volumeContext: { big: bigText("rrr") } }));
    expect(failure(refused).code).toBe("ResourceExhausted");
  });

  it("answers 50 calls in flight at once on one session alike", async () => {
    const calls = (t: Transport) => Promise.all(Array.from({ length: 50 }, (_, i) => outcome(t, publish, { volumeId: `vol-many-${i}`, nodeId: i % 5 === 0 ? "" : "node-a", volumeCapability: mountCapability })));
    const expected = await calls(reference.transport);
    const actual = await calls(ours.transport);
    expect(actual).toEqual(expected);
    expect(expected.filter((result) => result.ok)).toHaveLength(40);
  });

  it("fails Unimplemented for a service the driver does not serve", async () => {
    const result = await same(reference, ours, (t) => outcome(t, unknownServiceMethod, {}));
    expect(failure(result).code).toBe("Unimplemented");
  });

  it("fails a call at once as Unavailable when the driver closes the connection under it, and the next call reconnects", async () => {
    const cut = await same(
      reference,
      ours,
      (t) => outcome(t, publish, { volumeId: "vol-cut", nodeId: "node-a", volumeCapability: mountCapability }, 30_000),
      () => driver.control.script("ControllerPublishVolume", [{ disconnect: true }]),
    );
    expect(failure(cut)).toEqual({ code: "Unavailable", message: "connection to the CSI driver closed during the call" });
    const next = await same(reference, ours, (t) => outcome(t, publish, { volumeId: "vol-after-cut", nodeId: "node-a", volumeCapability: mountCapability }));
    expect(next.ok).toBe(true);
  });

  it("fails a call at once as Unavailable when the driver dies under it, and the next call as Unavailable too", async () => {
    const results: Outcome[][] = [];
    for (const { transport } of [reference, ours]) {
      await driver.restart();
      await driver.control.script("ControllerPublishVolume", [{ hang: true }]);
      const inFlight = outcome(transport, publish, { volumeId: "vol-killed", nodeId: "node-a", volumeCapability: mountCapability }, 30_000);
      await driver.control.waitForHung("ControllerPublishVolume");
      await driver.kill();
      const afterDeath = await outcome(transport, publish, { volumeId: "vol-dead", nodeId: "node-a", volumeCapability: mountCapability });
      results.push([await inFlight, afterDeath]);
    }
    const [[expectedCut, expectedDial] = [], [actualCut, actualDial] = []] = results;
    const cutByTheRule: Outcome = { ok: false, code: "Unavailable", message: "connection to the CSI driver closed during the call", details: [], metadata: [] };
    expect(actualCut).toEqual(cutByTheRule);
    // The reference raced its stream's error against its socket's close:
    // the rule's Unavailable when the close came first, else the stream's
    // own error. Ours applies the rule either way.
    const cutByItsStream: Outcome = { ok: false, code: "Aborted", message: "read ECONNRESET", details: [], metadata: [] };
    expect<Outcome[]>([cutByTheRule, cutByItsStream]).toContainEqual(expectedCut as Outcome);
    // The next call dials the dead driver's socket: refused, or cut when
    // the dial still lands in the dying listener's backlog (the kernel's
    // race, which driver-connection.ts's liveness watch knows too; the reference
    // also raced its socket's close event). A dial refused for sure is
    // compared in "before any driver answers".
    const refusedDial: Outcome = { ok: false, code: "Unavailable", message: `connect ECONNREFUSED ${driver.csiSocket}`, details: [], metadata: [] };
    expect<Outcome[]>([refusedDial, cutByTheRule]).toContainEqual(actualDial as Outcome);
    expect<Outcome[]>([refusedDial, cutByTheRule]).toContainEqual(expectedDial as Outcome);
    await driver.restart();
  });
});

describe("our unary gRPC transport against connect-node's, before any driver answers", () => {
  it("fails to dial a socket path that does not exist, and one that is no socket, as connect-node does", async () => {
    const dir = mkdtempSync(join(tmpdir(), "conformance-dial-"));
    try {
      const notSocket = join(dir, "plain-file");
      writeFileSync(notSocket, "");
      for (const socketPath of [join(dir, "missing.sock"), notSocket]) {
        const reference = side((interceptors) => referenceGrpcTransport(socketPath, interceptors));
        const ours = side((interceptors) => createUnaryGrpcTransport({ createConnection: () => net.connect(socketPath), interceptors }));
        const result = await same(reference, ours, (t) => outcome(t, Identity.method.probe, {}));
        expect(failure(result).message).toContain(socketPath);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("our unary gRPC transport against connect-node's, on Kubernetes' mock CSI driver", () => {
  let driver: MockCsiDriver;
  let dir: string;
  let reference: Side;
  let ours: Side;

  beforeAll(async () => {
    const components = await ensureComponents();
    dir = mkdtempSync(join(tmpdir(), "conformance-mock-"));
    driver = await startMockCsiDriver({ binary: components.mockCsiDriver, dir });
    reference = side((interceptors) => referenceGrpcTransport(driver.socket, interceptors));
    ours = side((interceptors) => createUnaryGrpcTransport({ createConnection: () => net.connect(driver.socket), interceptors }));
  });

  afterAll(async () => {
    await driver?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it("answers the identity calls and the capabilities alike", async () => {
    expect((await same(reference, ours, (t) => outcome(t, Identity.method.getPluginInfo, {}))).ok).toBe(true);
    expect((await same(reference, ours, (t) => outcome(t, Identity.method.getPluginCapabilities, {}))).ok).toBe(true);
    expect((await same(reference, ours, (t) => outcome(t, Identity.method.probe, {}))).ok).toBe(true);
    expect((await same(reference, ours, (t) => outcome(t, Controller.method.controllerGetCapabilities, {}))).ok).toBe(true);
  });

  it("creates, publishes, lists and unpublishes volumes alike, 1.5 MiB names included", async () => {
    for (const [name, fill] of [["small", undefined], ["big", "n"]] as const) {
      const created: { volume: { volumeId: string } }[] = [];
      for (const { transport } of [reference, ours]) {
        const volumeName: string = fill === undefined ? `conformance-${name}-${created.length}` : `${bigText(fill)}-${created.length}`;
        const result: Outcome = await outcome(transport, Controller.method.createVolume, { name: volumeName, volumeCapabilities: [mountCapability] });
        if (!result.ok) throw new Error(`CreateVolume failed: ${JSON.stringify(result)}`);
        created.push(result.response as { volume: { volumeId: string } });
      }
      const [referenceVolume, ourVolume] = created.map((response) => response.volume.volumeId);
      const published: Outcome[] = [];
      for (const [{ transport }, volumeId] of [[reference, referenceVolume], [ours, ourVolume]] as const) {
        published.push(await outcome(transport, publish, { volumeId: volumeId ?? "", nodeId: driver.nodeId, volumeCapability: mountCapability }));
      }
      expect(published[1]).toEqual(published[0]);
      expect(published[0]?.ok).toBe(true);
      const listed = await same(reference, ours, (t) => outcome(t, Controller.method.listVolumes, {}));
      expect(listed.ok && JSON.stringify(listed.response).length).toBeGreaterThan(fill === undefined ? 0 : 2 * 1536 * 1024);
      const unpublished: Outcome[] = [];
      for (const [{ transport }, volumeId] of [[reference, referenceVolume], [ours, ourVolume]] as const) {
        unpublished.push(await outcome(transport, unpublish, { volumeId: volumeId ?? "", nodeId: driver.nodeId }));
      }
      expect(unpublished[1]).toEqual(unpublished[0]);
      expect(unpublished[0]?.ok).toBe(true);
    }
  });

  it("fails with each code the driver's own checks answer: InvalidArgument, NotFound, AlreadyExists, OutOfRange, Aborted, Unimplemented", async () => {
    const cases: [string, (t: Transport) => Promise<Outcome>][] = [
      ["InvalidArgument", (t) => outcome(t, publish, { volumeId: "", nodeId: driver.nodeId, volumeCapability: mountCapability })],
      ["NotFound", (t) => outcome(t, publish, { volumeId: "1", nodeId: "some-other-node", volumeCapability: mountCapability })],
      ["NotFound", (t) => outcome(t, publish, { volumeId: "no-such-volume", nodeId: driver.nodeId, volumeCapability: mountCapability })],
      ["OutOfRange", (t) => outcome(t, Controller.method.createVolume, { name: "too-big", volumeCapabilities: [mountCapability], capacityRange: { requiredBytes: 2n ** 62n } })],
      ["Aborted", (t) => outcome(t, Controller.method.listVolumes, { startingToken: "not-a-number" })],
      ["Unimplemented", (t) => outcome(t, unknownServiceMethod, {})],
    ];
    for (const [code, call] of cases) {
      expect(failure(await same(reference, ours, call)).code).toBe(code);
    }
    // AlreadyExists: a name made once, asked for again with another size.
    const made = await outcome(ours.transport, Controller.method.createVolume, { name: "conformance-conflict", volumeCapabilities: [mountCapability], capacityRange: { requiredBytes: 1024n } });
    expect(made.ok).toBe(true);
    const conflict = await same(reference, ours, (t) => outcome(t, Controller.method.createVolume, { name: "conformance-conflict", volumeCapabilities: [mountCapability], capacityRange: { requiredBytes: 4096n } }));
    expect(failure(conflict).code).toBe("AlreadyExists");
  });

  it("reads grpc-go's trailers-only failures", async () => {
    expect(await trailersOnly(driver.socket, "/csi.v1.Controller/ControllerUnpublishVolume", new Uint8Array())).toBe(true);
    const result = await same(reference, ours, (t) => outcome(t, unpublish, { volumeId: "", nodeId: driver.nodeId }));
    expect(failure(result)).toEqual({ code: "InvalidArgument", message: "Volume ID cannot be empty" });
  });

  it("answers 50 calls in flight at once on one session alike", async () => {
    const calls = (t: Transport) => Promise.all(Array.from({ length: 50 }, (_, i) => outcome(t, Controller.method.listVolumes, { maxEntries: (i % 3) + 1 })));
    const expected = await calls(reference.transport);
    expect(await calls(ours.transport)).toEqual(expected);
    expect(expected.every((result) => result.ok)).toBe(true);
  });

  it("fails the calls after the driver stopped: Unavailable on the session it closed, then the dial's failure, as connect-node does", async () => {
    await driver.stop();
    // The sessions open when it stopped: grpc-go said GOAWAY and closed
    // them. A call may still meet a session whose close is not yet known
    // (then it is cut, by the rule), or dial the removed socket.
    const dialFailure: Outcome = { ok: false, code: "Internal", message: `connect ENOENT ${driver.socket}`, details: [], metadata: [] };
    const cutByTheRule: Outcome = { ok: false, code: "Unavailable", message: "connection to the CSI driver closed during the call", details: [], metadata: [] };
    for (const { transport } of [reference, ours]) {
      expect<Outcome[]>([dialFailure, cutByTheRule]).toContainEqual(await outcome(transport, Identity.method.probe, {}));
    }
    // Fresh transports only dial; connect-node calls a missing socket Internal (ENOENT is not in its list).
    const result = await same(
      side((interceptors) => referenceGrpcTransport(driver.socket, interceptors)),
      side((interceptors) => createUnaryGrpcTransport({ createConnection: () => net.connect(driver.socket), interceptors })),
      (t) => outcome(t, Identity.method.probe, {}),
    );
    expect(result).toEqual(dialFailure);
  });
});
