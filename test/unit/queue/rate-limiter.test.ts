import { describe, expect, it } from "bun:test";
import { ItemExponentialFailureRateLimiter } from "../../../src/queue/rate-limiter";

describe("ItemExponentialFailureRateLimiter", () => {
  it("delays by base * 2^failures, capped at max", () => {
    const limiter = new ItemExponentialFailureRateLimiter({ baseDelayMs: 10, maxDelayMs: 100 });
    const delays = Array.from({ length: 7 }, () => limiter.when("va-1"));
    expect(delays).toEqual([10, 20, 40, 80, 100, 100, 100]);
  });

  it("defaults to 1 s doubling up to 5 min", () => {
    const limiter = new ItemExponentialFailureRateLimiter();
    const delays = Array.from({ length: 11 }, () => limiter.when("va-1"));
    expect(delays).toEqual([
      1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000, 256000, 300000, 300000,
    ]);
  });

  it("counts failures per item", () => {
    const limiter = new ItemExponentialFailureRateLimiter({ baseDelayMs: 1, maxDelayMs: 1000 });
    limiter.when("a");
    limiter.when("a");
    limiter.when("b");
    // The next delay of each tells its failures so far: 2, 1 and none.
    expect([limiter.when("a"), limiter.when("b"), limiter.when("c")]).toEqual([4, 2, 1]);
  });

  it("forget resets the failure count", () => {
    const limiter = new ItemExponentialFailureRateLimiter({ baseDelayMs: 5, maxDelayMs: 1000 });
    limiter.when("a");
    limiter.when("a");
    limiter.forget("a");
    expect(limiter.when("a")).toBe(5);
  });

  it("stays at max however many failures pile up", () => {
    const limiter = new ItemExponentialFailureRateLimiter({ baseDelayMs: 1000, maxDelayMs: 300_000 });
    let last = 0;
    for (let i = 0; i < 5000; i++) last = limiter.when("a");
    expect(last).toBe(300_000);
    expect(limiter.when("a")).toBe(300_000);
  });

  it("never returns NaN with a zero base delay", () => {
    const limiter = new ItemExponentialFailureRateLimiter({ baseDelayMs: 0, maxDelayMs: 300_000 });
    let last = -1;
    for (let i = 0; i < 2000; i++) last = limiter.when("a");
    expect(last).toBe(0);
  });
});
