import { describe, expect, it } from "bun:test";
import { Logger } from "../../../src/log/logger";
import { BacklogWarning } from "../../../src/queue/backlog-warning";
import { WorkQueue } from "../../../src/queue/work-queue";
import { FakeClock } from "./fake-clock";

function setUp() {
  const clock = new FakeClock();
  const lines: string[] = [];
  // Severity letter and message with fields; klog's time, pid and caller left out.
  const log = new Logger({ sink: (line) => lines.push(line.replace(/^([IWE])\d{4} \S+ +\d+ \S+\] /, "$1 ")), now: () => clock.now() });
  const va = new WorkQueue<string>({ name: "csi-attacher-va", clock });
  const pv = new WorkQueue<string>({ name: "csi-attacher-pv", clock });
  const warning = new BacklogWarning({ queues: [va, pv], log, clock, thresholdMs: 60_000, checkIntervalMs: 10_000, repeatIntervalMs: 300_000 });
  return { clock, lines, va, pv, warning };
}

const warningLine = (queue: string, item: string, waitingSeconds: number, queued: number) =>
  `W "Work queue item has waited longer than the threshold for a worker" queue="${queue}" item="${item}" waitingSeconds=${waitingSeconds} thresholdSeconds=60 queued=${queued}`;

describe("BacklogWarning", () => {
  it("warns once an item has waited longer than the threshold, naming the queue and the item", () => {
    const { clock, lines, va, warning } = setUp();
    const stop = new AbortController();
    warning.run(stop.signal);
    va.add("va-1");
    clock.step(30_000);
    va.add("va-2");
    clock.step(20_000);
    expect(lines).toEqual([]);
    clock.step(10_000);
    expect(lines).toEqual([warningLine("csi-attacher-va", "va-1", 60, 2)]);
    stop.abort();
  });

  it("warns about one queue at most once per repeat interval while its backlog lasts", () => {
    const { clock, lines, va, pv, warning } = setUp();
    va.add("va-1");
    pv.add("pv-1");
    clock.step(60_000);
    warning.check();
    clock.step(299_000);
    warning.check();
    expect(lines).toEqual([warningLine("csi-attacher-va", "va-1", 60, 1), warningLine("csi-attacher-pv", "pv-1", 60, 1)]);
    clock.step(1_000);
    warning.check();
    expect(lines.slice(2)).toEqual([warningLine("csi-attacher-va", "va-1", 360, 1), warningLine("csi-attacher-pv", "pv-1", 360, 1)]);
  });

  it("stays quiet when every waiting item was taken in time", async () => {
    const { clock, lines, va, warning } = setUp();
    va.add("va-1");
    clock.step(59_000);
    await va.get();
    clock.step(120_000);
    warning.check();
    expect(lines).toEqual([]);
  });

  it("stops checking when its signal aborts", () => {
    const { clock, lines, va, warning } = setUp();
    const stop = new AbortController();
    warning.run(stop.signal);
    stop.abort();
    va.add("va-1");
    clock.step(120_000);
    expect([lines, clock.pendingTimers()]).toEqual([[], 0]);
  });
});
