import { describe, expect, it } from "bun:test";
import { FlagError } from "../../../src/cli/errors";
import { doctorFlagTable } from "../../../src/doctor/doctor-flag-table";
import { doctorUsage, parseDoctorFlags } from "../../../src/doctor/doctor-flags";
import { runDoctor } from "../../../src/doctor/run-doctor";

/** failureOf is the FlagError a command line fails with, as [message, flag], or what else happened. */
function failureOf(argv: readonly string[]): unknown {
  try {
    return parseDoctorFlags(argv);
  } catch (e: unknown) {
    return e instanceof FlagError ? [e.message, e.flag] : e;
  }
}

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

  it("gives every flag its table default when the command line is empty", () => {
    expect(parseDoctorFlags([])).toEqual({
      kubeconfig: "",
      csiAddress: "/run/csi/socket",
      output: "table",
      timeoutMs: 15_000,
      stuckAfterMs: 300_000,
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

  it("a flag unknown to the doctor is an error naming it, whether bare, with =value or mis-cased", () => {
    expect([["--resync", "1m"], ["--worker-threads=3"], ["--kubeConfig=/k"], ["-v"]].map(failureOf)).toEqual([
      ["flag provided but not defined: --resync (--help lists the flags)", "resync"],
      ["flag provided but not defined: --worker-threads (--help lists the flags)", "worker-threads"],
      ["flag provided but not defined: --kubeConfig (--help lists the flags)", "kubeConfig"],
      ["flag provided but not defined: --v (--help lists the flags)", "v"],
    ]);
  });

  it("--timeout and --stuck-after must be Go durations greater than zero, and the error names the flag and the value", () => {
    expect([["--timeout=abc"], ["--timeout", "0s"], ["--stuck-after=-1m"], ["--stuck-after=5"]].map(failureOf)).toEqual([
      ['invalid value "abc" for flag --timeout: not a duration; use Go syntax such as 15s, 1m30s or 500ms', "timeout"],
      ['invalid value "0s" for flag --timeout: must be greater than zero', "timeout"],
      ['invalid value "-1m" for flag --stuck-after: must be greater than zero', "stuck-after"],
      ['invalid value "5" for flag --stuck-after: not a duration; use Go syntax such as 15s, 1m30s or 500ms', "stuck-after"],
    ]);
  });

  it("--csi-address must name a socket, and loses its unix:// prefix", () => {
    expect([failureOf(["--csi-address="]), parseDoctorFlags(["--csi-address", "unix:///csi/csi.sock"]).csiAddress]).toEqual([
      ['invalid value "" for flag --csi-address: must name the CSI driver\'s Unix socket', "csi-address"],
      "/csi/csi.sock",
    ]);
  });

  it("a value flag at the end of the command line is missing its argument, and a word that is not a flag is refused", () => {
    expect([["--kubeconfig"], ["--output=json", "table"]].map(failureOf)).toEqual([
      ["flag needs an argument: --kubeconfig", "kubeconfig"],
      ['unexpected argument "table": every setting is a --flag, and a boolean takes its value as --flag=false', "table"],
    ]);
  });

  it("--help and -h ask for help as bare booleans that never take the next argument", () => {
    const read = [["--help"], ["-h"], ["--help=false"], ["-h", "--output=json"]].map((argv) => parseDoctorFlags(argv));
    expect(read.map(({ showHelp, output }) => [showHelp, output])).toEqual([
      [true, "table"],
      [true, "table"],
      [false, "table"],
      [true, "json"],
    ]);
  });
});

describe("doctorUsage", () => {
  it("the doctor's --help lists every flag of its table once, sorted by name", () => {
    const listed = [...doctorUsage().matchAll(/^ {2}-(\S+)/gm)].map((match) => match[1]);
    expect(listed).toEqual(doctorFlagTable.map((flag) => flag.name).sort());
  });

  it("shows each flag's value type, help and non-zero default in the attacher's --help layout", () => {
    const text = doctorUsage();
    expect(text).toContain("  -stuck-after duration\n    \tA VolumeAttachment attaching or detaching longer than this, with no error, counts as stuck. (default 5m0s)\n");
    expect(text).toContain('  -output string\n    \tReport format: "table" or "json". (default "table")\n');
    expect(text).toContain("  -kubeconfig string\n    \tAbsolute path to the kubeconfig file; empty means in-cluster.\n");
  });
});

describe("runDoctor's command line", () => {
  /** run is runDoctor with its output captured; a bad or help command line returns before any connection is made. */
  async function run(argv: readonly string[]): Promise<{ code: number; out: string; err: string }> {
    let out = "";
    let err = "";
    const code = await runDoctor(argv, { out: (text) => (out += text), err: (text) => (err += text) });
    return { code, out, err };
  }

  it("exits 2 with the flag's message for a value the schema refuses, as for an unreadable one", async () => {
    expect([await run(["--output=yaml"]), await run(["--timeout=soon"])]).toEqual([
      { code: 2, out: "", err: 'invalid value "yaml" for flag --output: must be "table" or "json"\n' },
      { code: 2, out: "", err: 'invalid value "soon" for flag --timeout: not a duration; use Go syntax such as 15s, 1m30s or 500ms\n' },
    ]);
  });

  it("-h prints the doctor's usage and exits 0", async () => {
    expect(await run(["-h"])).toEqual({ code: 0, out: `${doctorUsage()}\n`, err: "" });
  });
});
