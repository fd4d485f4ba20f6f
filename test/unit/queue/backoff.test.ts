import { describe, expect, it } from "bun:test";
import { Backoff, backoffDelayMs, driverStartupRetry, listWatchBackoff } from "../../../src/queue/backoff";

describe("back-off", () => {
  it("backs a failed list or watch off as client-go's reflector does: 800 ms doubling to 30 s, and starts over after a success", () => {
    const backoff = new Backoff(listWatchBackoff);
    const first = Array.from({ length: 8 }, () => backoff.next());
    backoff.reset();
    expect({ first, afterReset: backoff.next() }).toEqual({ first: [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000], afterReset: 800 });
  });

  it("retries the driver at start-up every second, as upstream", () => {
    const backoff = new Backoff(driverStartupRetry);
    expect(Array.from({ length: 4 }, () => backoff.next())).toEqual([1000, 1000, 1000, 1000]);
  });

  it("stays finite and capped however many failures there were", () => {
    expect([backoffDelayMs(listWatchBackoff, 5000), backoffDelayMs({ initialMs: 0, factor: 2, maxMs: 10 }, 5000)]).toEqual([30000, 0]);
  });
});
