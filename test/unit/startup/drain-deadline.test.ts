import { describe, expect, it } from "bun:test";
import { Logger } from "../../../src/log/logger";
import { DrainDeadline } from "../../../src/startup/drain-deadline";
import { FakeClock } from "../queue/fake-clock";

/** A deadline on a fake clock whose exits and log lines are recorded instead of ending the test. */
function deadlineWith(timeoutMs: number) {
  const clock = new FakeClock();
  const exits: number[] = [];
  const lines: string[] = [];
  const deadline = new DrainDeadline({
    timeoutMs,
    log: new Logger({ verbosity: 0, sink: (line) => lines.push(line) }),
    exit: (code) => {
      exits.push(code);
      return undefined as never;
    },
    clock,
  });
  return { clock, exits, lines, deadline };
}

describe("drain deadline", () => {
  it("exits 1 with 'In-flight operations did not finish in time' once --timeout and 5 s have passed since the work was told to stop", () => {
    const { clock, exits, lines, deadline } = deadlineWith(2_000);
    deadline.start();
    clock.step(6_999);
    expect(exits).toEqual([]);
    clock.step(1);
    expect(exits).toEqual([1]);
    expect(lines.join("")).toContain('"In-flight operations did not finish in time, exiting" drainTimeout="7000ms"');
  });

  it("never exits once the work has drained, however long the process then waits for a lost driver's meaning", () => {
    const { clock, exits, lines, deadline } = deadlineWith(2_000);
    deadline.start();
    clock.step(1_000);
    deadline.drained();
    clock.step(60_000);
    expect(exits).toEqual([]);
    expect(lines).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it("arms nothing when started after the work drained, nor a second time when started twice", () => {
    const drainedFirst = deadlineWith(2_000);
    drainedFirst.deadline.drained();
    drainedFirst.deadline.start();
    expect(drainedFirst.clock.pendingTimers()).toBe(0);

    const twice = deadlineWith(2_000);
    twice.deadline.start();
    twice.deadline.start();
    expect(twice.clock.pendingTimers()).toBe(1);
  });
});
