import { describe, expect, it } from "bun:test";
import { Logger } from "../../../src/log/logger";

function capture(format: "text" | "json", verbosity = 0) {
  const lines: string[] = [];
  const log = new Logger({ format, verbosity, sink: (line) => lines.push(line), now: () => Date.UTC(2026, 10, 21, 22, 43, 33, 123) });
  return { log, lines };
}

describe("logger", () => {
  it("prints text lines like klog: header, quoted message, key=value fields", () => {
    const { log, lines } = capture("text");
    log.with({ va: "csi-123" }).info("Attached", { node: "node-1", attempts: 2 });
    expect(lines[0]).toMatch(/^I1121 22:43:33\.123000 +\d+ attacher\] "Attached" va="csi-123" node="node-1" attempts=2$/);
  });

  it("prints one JSON object a line with --logging-format=json", () => {
    const { log, lines } = capture("json");
    log.error("Failed", { err: new Error("boom"), va: "a" });
    expect(JSON.parse(lines[0] ?? "")).toEqual({ ts: 1_795_301_013.123, v: 0, msg: "Failed", err: "boom", va: "a", severity: "error" });
  });

  it("prints -v lines only up to the configured verbosity", () => {
    const { log, lines } = capture("text", 2);
    log.v(2).info("shown");
    log.v(4).info("hidden");
    expect(lines.map((line) => line.match(/"(\w+)"/)?.[1])).toEqual(["shown"]);
  });
});
