import { describe, expect, it } from "bun:test";
import { formatGoDuration, parseGoDuration } from "../../../src/cli/duration";

describe("parseGoDuration", () => {
  it("reads every form of Go's time.ParseDuration that operators write", () => {
    expect(["15s", "1m30s", "500ms", "1.5h", "0", "2h45m", "100us", "1000000ns", "-1s", ".5s"].map(parseGoDuration)).toEqual([
      15_000, 90_000, 500, 5_400_000, 0, 9_900_000, 0.1, 1, -1000, 500,
    ]);
  });

  it("rejects what Go rejects: bare numbers, unknown units, empty text", () => {
    expect(["15", "1d", "", "s", "1 s", "1m30", "--1s"].map(parseGoDuration)).toEqual(Array(7).fill(undefined));
  });
});

describe("formatGoDuration", () => {
  it("prints durations the way Go's Duration.String does", () => {
    expect([0, 500, 15_000, 90_000, 3_600_000, 5_400_500].map(formatGoDuration)).toEqual(["0s", "500ms", "15s", "1m30s", "1h0m0s", "1h30m0.5s"]);
  });
});
