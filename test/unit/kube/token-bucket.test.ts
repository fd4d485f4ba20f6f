import { describe, expect, it } from "bun:test";
import { createApiThrottle, TokenBucket } from "../../../src/kube/token-bucket";
import { FakeClock } from "../queue/fake-clock";
import { settle } from "../queue/settle";

/** A bucket on a fake clock, and a way to see which of several callers got through. */
function fakeBucket(qps: number, burst: number) {
  const clock = new FakeClock(0);
  // Every wait for a token is one timer on the clock.
  const sleeps = clock.delays;
  const bucket = new TokenBucket({ qps, burst, clock });
  const passed: number[] = [];
  const request = (id: number, signal?: AbortSignal) =>
    bucket.wait(signal).then(
      () => passed.push(id),
      () => passed.push(-id),
    );
  return { clock, bucket, sleeps, passed, request };
}

describe("token bucket (--kube-api-qps/--kube-api-burst)", () => {
  it("lets a full burst through at once, then one request per 1/qps seconds in arrival order", async () => {
    const { clock, passed, request } = fakeBucket(2, 3);
    for (let id = 1; id <= 6; id++) void request(id);
    await settle();
    expect(passed).toEqual([1, 2, 3]);
    clock.step(499);
    await settle();
    expect(passed).toEqual([1, 2, 3]);
    clock.step(1);
    await settle();
    expect(passed).toEqual([1, 2, 3, 4]);
    clock.step(500);
    await settle();
    expect(passed).toEqual([1, 2, 3, 4, 5]);
    clock.step(500);
    await settle();
    expect(passed).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("refills at qps while idle, but never beyond burst", async () => {
    const { clock, bucket } = fakeBucket(5, 10);
    for (let i = 0; i < 10; i++) await bucket.wait();
    expect(bucket.available()).toBe(0);
    clock.step(1000);
    expect(bucket.available()).toBe(5);
    clock.step(60_000);
    expect(bucket.available()).toBe(10);
  });

  it("accrues fractional tokens: at 0.5 qps a token takes 2 s", async () => {
    const { clock, bucket, sleeps } = fakeBucket(0.5, 1);
    await bucket.wait();
    clock.step(1000);
    const second = bucket.wait();
    expect(sleeps).toEqual([1000]);
    clock.step(1000);
    await second;
  });

  it("hands an aborted caller's reservation back, so the next caller does not wait for it", async () => {
    const { clock, passed, request, sleeps } = fakeBucket(1, 1);
    void request(1);
    const giveUp = new AbortController();
    void request(2, giveUp.signal);
    await settle();
    giveUp.abort();
    await settle();
    expect(passed).toEqual([1, -2]);
    void request(3);
    await settle();
    // Caller 3 waits for one token (1 s), not for caller 2's as well (2 s).
    expect(sleeps).toEqual([1000, 1000]);
    clock.step(1000);
    await settle();
    expect(passed).toEqual([1, -2, 3]);
  });

  it("rejects at once, taking no token, when the signal is already aborted", async () => {
    const { bucket } = fakeBucket(1, 1);
    const aborted = AbortSignal.abort(new Error("stopping"));
    await expect(bucket.wait(aborted)).rejects.toThrow("stopping");
    expect(bucket.available()).toBe(1);
  });

  it("tryTake takes a token only when a whole one is there, never reserving one", () => {
    const { clock, bucket } = fakeBucket(1, 2);
    expect([bucket.tryTake(), bucket.tryTake(), bucket.tryTake()]).toEqual([true, true, false]);
    clock.step(999);
    expect(bucket.tryTake()).toBe(false);
    clock.step(1);
    expect([bucket.tryTake(), bucket.available()]).toEqual([true, 0]);
  });

  it("refills by the monotonic clock: a step of the wall clock back neither holds requests nor, forward, refills a whole burst", () => {
    const { clock, bucket } = fakeBucket(1, 3);
    expect([bucket.tryTake(), bucket.tryTake(), bucket.tryTake(), bucket.tryTake()]).toEqual([true, true, true, false]);
    clock.stepWall(3_600_000);
    expect(bucket.available()).toBe(0);
    clock.stepWall(-7_200_000);
    clock.step(999);
    expect(bucket.tryTake()).toBe(false);
    clock.step(1);
    expect([bucket.tryTake(), bucket.tryTake()]).toEqual([true, false]);
  });

  it("refuses a qps or burst it cannot honour", () => {
    expect(() => new TokenBucket({ qps: 0, burst: 1 })).toThrow("qps must be a positive number");
    expect(() => new TokenBucket({ qps: 1, burst: 0 })).toThrow("burst must be an integer >= 1");
  });
});

describe("createApiThrottle resolves the flags as client-go's rest config does", () => {
  it("treats qps 0 and burst 0 as the defaults 5 and 10", async () => {
    const clock = new FakeClock(0);
    const throttle = createApiThrottle(0, 0, { clock });
    for (let i = 0; i < 10; i++) await throttle?.();
    const eleventh = throttle?.();
    // Ten from the burst, the eleventh waits 1/5 s.
    expect(clock.delays).toEqual([200]);
    clock.step(200);
    await eleventh;
  });

  it("has no limit at all when qps is negative", () => {
    expect(createApiThrottle(-1, 10)).toBeUndefined();
  });

  it("names the flag when burst is negative", () => {
    expect(() => createApiThrottle(5, -1)).toThrow("--kube-api-burst");
  });
});
