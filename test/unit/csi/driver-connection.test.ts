import { describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync, unlinkSync } from "node:fs";
import * as http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { Controller } from "../../../gen/csi/v1/csi_pb";
import { CsiClient } from "../../../src/csi/csi-client";
import { CsiCallError } from "../../../src/csi/errors";
import { createDriverConnection } from "../../../src/csi/driver-connection";

/** What the fake driver does with each call, in order of arrival. */
type CallAnswer = "drop-connection" | "answer-empty" | "reset-no-error" | "goaway-then-answer";

/**
 * driverOnSocket serves gRPC on a Unix socket by hand: each call is
 * answered with an empty message and status OK (a Probe answer: ready),
 * left unanswered while the driver drops the whole connection under it,
 * reset with NO_ERROR before any answer, or answered after the driver told
 * the session to go away. `sessions` counts the connections that carried a
 * call: the attacher's liveness probe also connects (after a connection of
 * its closes, as soon as the socket says so), and carries none.
 *
 * Given `takeOver`, another driver's socket path, it binds a new socket file
 * there as a restarted driver does, while the other still runs: whoever dials
 * the path from then on reaches this one. `dropAll` ends every connection
 * it accepted.
 */
async function driverOnSocket(answers: CallAnswer[], takeOver?: string): Promise<{ socketPath: string; sessions: () => number; dropAll: () => void } & AsyncDisposable> {
  const dir = takeOver === undefined ? mkdtempSync(join(tmpdir(), "driver-connection-")) : undefined;
  const socketPath = takeOver ?? join(dir as string, "csi.sock");
  if (takeOver !== undefined) unlinkSync(takeOver);
  const server = http2.createServer();
  // The attacher keeps its driver session open for good: ended here, or the server would wait for it.
  const sessions = new Set<http2.ServerHttp2Session>();
  const calling = new Set<http2.Http2Session>();
  server.on("session", (session) => {
    sessions.add(session);
  });
  server.on("stream", (stream: http2.ServerHttp2Stream) => {
    if (stream.session) calling.add(stream.session);
    const answer = answers.shift() ?? "answer-empty";
    if (answer === "drop-connection") {
      stream.session?.destroy();
      return;
    }
    if (answer === "reset-no-error") {
      stream.close(http2.constants.NGHTTP2_NO_ERROR);
      return;
    }
    if (answer === "goaway-then-answer") stream.session?.goaway(http2.constants.NGHTTP2_NO_ERROR, stream.id);
    stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
    stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
    // One envelope: no flags, zero-length message.
    stream.end(Buffer.alloc(5));
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return {
    socketPath,
    sessions: () => calling.size,
    dropAll: () => {
      for (const session of sessions) session.destroy();
    },
    [Symbol.asyncDispose]() {
      // Bun's server.close() does not call back once a session it had is gone: not awaited.
      server.close();
      for (const session of sessions) session.destroy();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
      return Promise.resolve();
    },
  };
}

describe("driver connection", () => {
  it("fails a call in flight at once as Unavailable when the driver connection closes, instead of waiting out its deadline", async () => {
    await using driver = await driverOnSocket(["drop-connection"]);
    const client = new CsiClient(createDriverConnection({ socketPath: driver.socketPath, onConnectionLost: () => {} }).transport);
    const started = performance.now();
    const failure = await client.probe(60_000).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(CsiCallError);
    expect((failure as CsiCallError).code).toBe(Code.Unavailable);
    expect(performance.now() - started).toBeLessThan(30_000);
  });

  it("leaves calls made after a connection closed to the next connection: the close fails only the calls it cut", async () => {
    await using driver = await driverOnSocket(["drop-connection", "answer-empty", "answer-empty"]);
    const client = new CsiClient(createDriverConnection({ socketPath: driver.socketPath, onConnectionLost: () => {} }).transport);
    await expect(client.probe(60_000)).rejects.toBeInstanceOf(CsiCallError);
    expect(await client.probe(60_000)).toBe(true);
    expect(await client.probe(60_000)).toBe(true);
  });

  it("fails at once as Internal a call the driver resets with NO_ERROR before answering, on a connection that stays up", async () => {
    await using driver = await driverOnSocket(["reset-no-error", "answer-empty"]);
    const client = new CsiClient(createDriverConnection({ socketPath: driver.socketPath, onConnectionLost: () => {} }).transport);
    const failure = await client.probe(60_000).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(CsiCallError);
    expect((failure as CsiCallError).message).toBe("rpc error: code = Internal desc = protocol error: missing status");
    expect(await client.probe(60_000)).toBe(true);
    expect(driver.sessions()).toBe(1);
  });

  it("finishes a call on a session the driver told to go away, and opens a new session for the next call", async () => {
    await using driver = await driverOnSocket(["goaway-then-answer", "answer-empty"]);
    const client = new CsiClient(createDriverConnection({ socketPath: driver.socketPath, onConnectionLost: () => {} }).transport);
    expect(await client.probe(60_000)).toBe(true);
    expect(await client.probe(60_000)).toBe(true);
    expect(driver.sessions()).toBe(2);
  });

  it("checkDriverNow reports a driver that went away before it resolves, and reports nothing while the driver is there", async () => {
    const lost: string[] = [];
    let connection: ReturnType<typeof createDriverConnection> | undefined;
    {
      await using driver = await driverOnSocket([]);
      connection = createDriverConnection({ socketPath: driver.socketPath, onConnectionLost: (reason) => lost.push(reason) });
      expect(await new CsiClient(connection.transport).probe(60_000)).toBe(true);
      await connection.checkDriverNow();
      expect(lost).toEqual([]);
    }
    await connection.checkDriverNow();
    expect(lost).toHaveLength(1);
  });

  it("reports the driver lost when the dial after a closed connection reaches another driver that bound the socket anew, as a restart faster than that dial does", async () => {
    const lost: string[] = [];
    await using first = await driverOnSocket([]);
    const connection = createDriverConnection({ socketPath: first.socketPath, onConnectionLost: (reason) => lost.push(reason) });
    expect(await new CsiClient(connection.transport).probe(60_000)).toBe(true);
    await using restarted = await driverOnSocket([], first.socketPath);
    // The old driver's connections end while the new one already listens: the liveness dial after the close can only reach the new driver.
    first.dropAll();
    const deadline = performance.now() + 3_000;
    while (lost.length === 0 && performance.now() < deadline) await Bun.sleep(10);
    expect(lost).toEqual([`the driver's socket ${restarted.socketPath} is a new file: another driver listens there`]);
  });

  it("refuses streaming calls, which the attacher never makes", async () => {
    const { transport } = createDriverConnection({ socketPath: "/nonexistent/csi.sock", onConnectionLost: () => {} });
    const failure = await transport.stream(Controller.method.controllerPublishVolume as never, undefined, 1000, undefined, (async function* () {})()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(ConnectError);
    expect((failure as ConnectError).code).toBe(Code.Unimplemented);
  });
});
