import { describe, expect, it } from "bun:test";
import { FlagError } from "../../../src/cli/errors";
import { parseDoctorFlags } from "../../../src/doctor/doctor-flags";

describe("parseDoctorFlags", () => {
  it("reads the attacher's flag spellings and Go durations", () => {
    expect(parseDoctorFlags(["-kubeconfig", "/k", "--csi-address=unix:///run/csi/csi.sock", "--output=json", "--timeout=2s", "--stuck-after", "90s"])).toEqual({
      kubeconfig: "/k",
      csiAddress: "/run/csi/csi.sock",
      output: "json",
      timeoutMs: 2_000,
      stuckAfterMs: 90_000,
      showHelp: false,
    });
  });

  it("refuses an unknown output format, naming the flag and what is accepted", () => {
    expect(() => parseDoctorFlags(["--output=yaml"])).toThrow(new Error('invalid value "yaml" for flag --output: must be "table" or "json"'));
  });

  it("refuses an unknown flag with exit status 2", () => {
    let error: unknown;
    try {
      parseDoctorFlags(["--leader-election"]);
    } catch (e: unknown) {
      error = e;
    }
    expect(error instanceof FlagError ? [error.message, error.exitCode] : error).toEqual(["flag provided but not defined: --leader-election (--help lists the flags)", 2]);
  });
});
