import { afterAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UnixSocket } from "../../../src/csi/unix-socket";

const dir = mkdtempSync(join(tmpdir(), "unix-socket-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What a failed dial said, as the attacher's callers read it. */
function describeDialError(e: unknown): Record<string, unknown> {
  const error = e as { message?: unknown; code?: unknown; errno?: unknown; syscall?: unknown; address?: unknown };
  return { message: error.message, code: error.code, errno: error.errno, syscall: error.syscall, address: error.address };
}

/** The part of a socket a failed dial is read through. */
interface Dialled {
  on(event: "error", listener: (e: Error) => void): unknown;
  on(event: "connect", listener: () => void): unknown;
}

/** failedDial dials with `dial` and answers the first error; a connection fails the rule. */
function failedDial(dial: () => Dialled): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const socket = dial();
    socket.on("error", (e: Error) => resolve(e));
    socket.on("connect", () => reject(new Error("connected")));
  });
}

describe("the driver's Unix socket on Bun's own socket", () => {
  it.each([
    ["a socket that does not exist", "missing.sock"],
    ["a file that is not a socket", "plain-file"],
  ])("words a failed dial to %s as node:net does: message, code, errno, syscall and address", async (_what, name) => {
    const path = join(dir, name);
    if (name === "plain-file") writeFileSync(path, "not a socket");
    const ours = await failedDial(() => new UnixSocket(path));
    const node = await failedDial(() => net.connect(path));
    expect(describeDialError(ours)).toEqual(describeDialError(node));
  });

  it("emits one error and then one close for a failed dial", async () => {
    const socket = new UnixSocket(join(dir, "nobody-here.sock"));
    const events: string[] = [];
    socket.on("error", () => events.push("error"));
    await new Promise<void>((resolve) => socket.on("close", () => resolve()));
    events.push("close");
    await Bun.sleep(20);
    expect(events).toEqual(["error", "close"]);
  });

  it("tells listeners added right after it is made that it connected, writes what they sent before, and closes once", async () => {
    const path = join(dir, "echo.sock");
    const received: Buffer[] = [];
    const server = Bun.listen({ unix: path, socket: { data: (s, data) => { received.push(Buffer.from(data)); s.end(); } } });
    try {
      const socket = new UnixSocket(path);
      const events: string[] = [];
      socket.on("connect", () => events.push("connect"));
      socket.write(Buffer.from("written before the connection"));
      await new Promise<void>((resolve) => socket.on("close", () => resolve()));
      events.push("close");
      expect(events).toEqual(["connect", "close"]);
      expect(Buffer.concat(received).toString()).toBe("written before the connection");
    } finally {
      server.stop(true);
    }
  });
});
