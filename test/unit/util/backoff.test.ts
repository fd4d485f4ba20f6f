import { describe, expect, it } from "bun:test";
import { backoffDelayMs } from "../../../src/util/backoff";

describe("back-off", () => {
  it("stays finite and capped however many failures there were", () => {
    const clientGoReflector = { initialMs: 800, factor: 2, maxMs: 30_000 };
    expect([backoffDelayMs(clientGoReflector, 5000), backoffDelayMs({ initialMs: 0, factor: 2, maxMs: 10 }, 5000)]).toEqual([30000, 0]);
  });
});
