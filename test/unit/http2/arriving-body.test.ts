import { describe, expect, it } from "bun:test";
import { ArrivingBody } from "../../../src/http2/arriving-body";

describe("ArrivingBody", () => {
  it("gives a waiting reader everything that arrived in one turn as one piece, and releases exactly what it took", async () => {
    const released: number[] = [];
    const body = new ArrivingBody((octets) => released.push(octets));
    const read = body.next();
    body.push(Buffer.from("ab"));
    body.push(Buffer.from("cd"));
    expect((await read)?.toString()).toBe("abcd");
    expect(released).toEqual([4]);
  });

  it("releases nothing of what the reader has not taken", async () => {
    const released: number[] = [];
    const body = new ArrivingBody((octets) => released.push(octets));
    body.push(Buffer.from("abc"));
    await Bun.sleep(1);
    expect(released).toEqual([]);
    expect((await body.next())?.toString()).toBe("abc");
    expect(released).toEqual([3]);
  });

  it("ends a complete body after its last piece, and a cut one with its error once the rest is read", async () => {
    const complete = new ArrivingBody(() => {});
    complete.push(Buffer.from("x"));
    complete.finish();
    expect((await complete.next())?.toString()).toBe("x");
    expect(await complete.next()).toBeUndefined();

    const cut = new ArrivingBody(() => {});
    cut.push(Buffer.from("y"));
    cut.finish(new Error("reset"));
    expect((await cut.next())?.toString()).toBe("y");
    await expect(cut.next()).rejects.toThrow("reset");
  });

  it("wakes a reader waiting when the body ends", async () => {
    const body = new ArrivingBody(() => {});
    const read = body.next();
    body.finish(new Error("connection lost"));
    await expect(read).rejects.toThrow("connection lost");
  });
});
