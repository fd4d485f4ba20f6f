import { describe, expect, it } from "bun:test";
import { withDeadline } from "../../../src/util/with-deadline";
import { FakeClock } from "../queue/fake-clock";

describe("withDeadline", () => {
  it("aborts the signal it gives when the parent aborts, with the parent's reason", async () => {
    const parent = new AbortController();
    const reason = await withDeadline(parent.signal, 60_000, async (signal) => {
      parent.abort(new Error("stopping"));
      return signal.aborted ? (signal.reason as Error).message : "not aborted";
    }, new FakeClock());
    expect(reason).toBe("stopping");
  });

  it("aborts the signal it gives when the deadline passes, as a TimeoutError", async () => {
    const clock = new FakeClock();
    const reason = await withDeadline(new AbortController().signal, 5_000, async (signal) => {
      clock.step(4_999);
      const early = signal.aborted;
      clock.step(1);
      return [early, signal.aborted, (signal.reason as DOMException).name];
    }, clock);
    expect(reason).toEqual([false, true, "TimeoutError"]);
  });

  it("gives an aborted signal at once when the parent has already aborted", async () => {
    const parent = new AbortController();
    parent.abort(new Error("gone"));
    expect(await withDeadline(parent.signal, 60_000, async (signal) => signal.aborted, new FakeClock())).toBe(true);
  });

  it("unlinks from the parent and the timer once fn settles, so neither aborts the signal later", async () => {
    const parent = new AbortController();
    const clock = new FakeClock();
    let given: AbortSignal | undefined;
    await expect(
      withDeadline(parent.signal, 1_000, async (signal) => {
        given = signal;
        throw new Error("fn failed");
      }, clock),
    ).rejects.toThrow("fn failed");
    parent.abort();
    clock.step(2_000);
    expect(given?.aborted).toBe(false);
  });
});
