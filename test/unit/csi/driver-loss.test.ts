import { describe, expect, it } from "bun:test";
import { DriverLoss } from "../../../src/csi/driver-loss";
import { FakeClock } from "../queue/fake-clock";

/** Lets the promise chains that a fake clock step resolved run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A DriverLoss on a fake clock, with a 1 s spread, that counts how often it stopped the work. */
function watch(stop: AbortController) {
  const clock = new FakeClock();
  let workStops = 0;
  const loss = new DriverLoss({ stopping: stop.signal, signalSpreadMs: 1_000, clock, stopWork: () => workStops++ });
  return { clock, loss, workStops: () => workStops };
}

describe("a lost driver connection", () => {
  it("is part of the shutdown when the stop signal came first", async () => {
    const stop = new AbortController();
    stop.abort();
    const { clock, loss } = watch(stop);
    expect(await loss.note()).toBe("shutting-down");
    expect(await loss.exitCode()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it("is part of the shutdown when the stop signal follows within the signals' spread", async () => {
    const stop = new AbortController();
    const { clock, loss } = watch(stop);
    const meaning = loss.note();
    clock.step(999);
    stop.abort();
    expect(await meaning).toBe("shutting-down");
    expect(await loss.exitCode()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it("is a lost driver when no stop signal comes within the spread, and one that comes later changes nothing", async () => {
    const stop = new AbortController();
    const { clock, loss } = watch(stop);
    let meaning: string | undefined;
    void loss.note()?.then((m) => (meaning = m));
    clock.step(999);
    await settle();
    expect(meaning).toBeUndefined();
    clock.step(1);
    await settle();
    stop.abort();
    await settle();
    expect(meaning).toBe("lost");
    expect(await loss.exitCode()).toBe(1);
  });

  // Issue 27 on a loaded node: the driver left more than the spread before
  // the SIGTERM; judged first, the leader exited 1 still holding the Lease.
  it("stops the work at once, before any stop signal and before it is judged, so that a leader's term ends and it can give the Lease back", async () => {
    const stop = new AbortController();
    const { loss, workStops } = watch(stop);
    let judged = false;
    void loss.note()?.then(() => (judged = true));
    expect(workStops()).toBe(1);
    await settle();
    expect(judged).toBe(false);
  });

  it("judges only the first loss; a later one neither stops the work again nor starts another wait", async () => {
    const stop = new AbortController();
    const { clock, loss, workStops } = watch(stop);
    const first = loss.note();
    expect(loss.note()).toBeUndefined();
    expect(workStops()).toBe(1);
    expect(clock.pendingTimers()).toBe(1);
    clock.step(1_000);
    expect(await first).toBe("lost");
  });

  it("with no loss at all, leaves the exit to the shutdown: 0", async () => {
    const { loss, workStops } = watch(new AbortController());
    expect(await loss.exitCode()).toBe(0);
    expect(workStops()).toBe(0);
  });
});
