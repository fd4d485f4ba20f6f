import { describe, expect, it } from "bun:test";
import { Logger } from "../../../src/log/logger";

// 2026-11-21 22:43:33.123456 in local time: klog prints local time.
const loggedAt = new Date(2026, 10, 21, 22, 43, 33, 123).getTime() + 0.456;

function capture(format: "text" | "json", verbosity = 0, pid = 4242) {
  const lines: string[] = [];
  const log = new Logger({ format, verbosity, pid, sink: (line) => lines.push(line), now: () => loggedAt });
  return { log, lines };
}

/** The line number of the statement that calls it, as the stack names it. */
function lineHere(): number {
  const frame = new Error().stack?.split("\n")[2] ?? "";
  return Number(/:(\d+):\d+\)?$/.exec(frame)?.[1]);
}

describe("logger text format (klog)", () => {
  it("prints klog's header with a 7-wide pid and the caller's file:line, then the quoted message and key=value fields", () => {
    const { log, lines } = capture("text");
    log.with({ va: "csi-123" }).info("Attached", { node: "node-1", attempts: 2, ready: true }); const line = lineHere();
    expect(lines).toEqual([`I1121 22:43:33.123456    4242 logger.test.ts:${line}] "Attached" va="csi-123" node="node-1" attempts=2 ready=true`]);
  });

  it("marks warnings W and errors E, prints an error as its quoted message and null as <nil>", () => {
    const { log, lines } = capture("text");
    log.warn("Slow"); log.error("Failed", { err: new Error("boom"), reason: null }); const line = lineHere();
    expect(lines).toEqual([
      `W1121 22:43:33.123456    4242 logger.test.ts:${line}] "Slow"`,
      `E1121 22:43:33.123456    4242 logger.test.ts:${line}] "Failed" err="boom" reason=<nil>`,
    ]);
  });

  it("keeps the last 7 digits of a pid wider than klog's column", () => {
    const { log, lines } = capture("text", 0, 123_456_789);
    log.info("x");
    expect(lines[0]).toStartWith("I1121 22:43:33.123456 3456789 logger.test.ts:");
  });

  it("prints a multi-line value as klog does: tab-indented lines between < and >", () => {
    const { log, lines } = capture("text");
    log.info("Driver said", { message: "line one\nline two\n" });
    expect(lines[0]).toEndWith(`"Driver said" message=<\n\tline one\n\tline two\n >`);
  });

  it("prints -v lines only up to the configured verbosity", () => {
    const { log, lines } = capture("text", 2);
    log.v(2).info("shown");
    log.v(4).info("hidden");
    expect(log.v(4).enabled).toBe(false);
    expect(lines.map((line) => line.match(/"(\w+)"/)?.[1])).toEqual(["shown"]);
  });
});

describe("logger JSON format (component-base)", () => {
  it("prints ts in milliseconds, the short caller, msg, context, v, then the call's fields", () => {
    const { log, lines } = capture("json", 4);
    log.with({ va: "a" }).v(4).info("Decided", { node: "n1" }); const line = lineHere();
    expect(JSON.parse(lines[0] ?? "")).toEqual({ ts: loggedAt, caller: `log/logger.test.ts:${line}`, msg: "Decided", va: "a", v: 4, node: "n1" });
    expect(Object.keys(JSON.parse(lines[0] ?? ""))).toEqual(["ts", "caller", "msg", "va", "v", "node"]);
  });

  it("prints an error line without v and the error as its message under err", () => {
    const { log, lines } = capture("json");
    log.error("Failed", { err: new Error("boom"), va: "a" }); const line = lineHere();
    expect(JSON.parse(lines[0] ?? "")).toEqual({ ts: loggedAt, caller: `log/logger.test.ts:${line}`, msg: "Failed", err: "boom", va: "a" });
  });
});

describe("logger time zone", () => {
  it("prints the same header from the UTC getters as from local time when local time is UTC", () => {
    // 2026-11-21 22:43:33.123456 UTC.
    const at = Date.UTC(2026, 10, 21, 22, 43, 33, 123) + 0.456;
    const lines: string[] = [];
    new Logger({ pid: 1, sink: (line) => lines.push(line), now: () => at, localTimeIsUtc: true }).info("x");
    expect(lines[0]).toStartWith("I1121 22:43:33.123456       1 logger.test.ts:");
  });
});
