import { describe, expect, it } from "bun:test";
import { parseConfig } from "../../../src/cli/config";

describe("parseConfig", () => {
  it("uses upstream's defaults when no flag is given", () => {
    expect(parseConfig([])).toEqual({
      csiAddress: "/run/csi/socket",
      kubeconfig: "",
      resyncMs: 600_000,
      timeoutMs: 15_000,
      retryIntervalStartMs: 1000,
      retryIntervalMaxMs: 300_000,
      workerThreads: 10,
      defaultFsType: "",
      loggingFormat: "text",
      verbosity: 0,
      showVersion: false,
      showHelp: false,
    });
  });

  it("accepts --flag=value, --flag value, single-dash and bare booleans alike", () => {
    const config = parseConfig(["--csi-address=unix:///csi/csi.sock", "--timeout", "1m30s", "-v=5", "-worker-threads", "3", "--version"]);
    expect(config).toMatchObject({ csiAddress: "/csi/csi.sock", timeoutMs: 90_000, verbosity: 5, workerThreads: 3, showVersion: true });
  });

  it("names the flag, the value and what is accepted when a value is bad", () => {
    expect(() => parseConfig(["--worker-threads=0"])).toThrow('invalid flag --worker-threads: "0": must be at least 1');
    expect(() => parseConfig(["--timeout=15"])).toThrow('invalid flag --timeout: "15" is not a duration; use Go syntax such as 15s, 1m30s or 500ms');
    expect(() => parseConfig(["--logging-format=yaml"])).toThrow('invalid flag --logging-format: "yaml": accepted values are "text" and "json"');
    expect(() => parseConfig(["--worker-threads=ten"])).toThrow('invalid flag --worker-threads: "ten" is not a whole number');
  });

  it("rejects unknown flags and stray arguments instead of ignoring them", () => {
    expect(() => parseConfig(["--no-such-flag=1"])).toThrow("invalid flag --no-such-flag: unknown flag");
    expect(() => parseConfig(["stray"])).toThrow('unexpected argument "stray"');
    expect(() => parseConfig(["--timeout"])).toThrow("invalid flag --timeout: flag needs an argument");
  });

  it("rejects a maximum retry interval shorter than the initial one", () => {
    expect(() => parseConfig(["--retry-interval-start=10s", "--retry-interval-max=1s"])).toThrow(
      "invalid flag --retry-interval-max: 1s is shorter than --retry-interval-start 10s",
    );
  });
});
