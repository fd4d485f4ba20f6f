import { FlagError } from "../cli/errors";
import { parseGoDuration } from "../cli/duration";

/** The formats `csi-attacher doctor` prints its report in. */
export type DoctorOutput = "table" | "json";

/** DoctorFlags are the settings of `csi-attacher doctor`. */
export interface DoctorFlags {
  /** Kubeconfig path; "" means in-cluster. Default "". */
  readonly kubeconfig: string;
  /** The driver's Unix socket, `unix://` stripped. Default /run/csi/socket, as the attacher's. */
  readonly csiAddress: string;
  /** Report format. Default "table". */
  readonly output: DoctorOutput;
  /** Deadline of each driver call, and of all ListVolumes pages together. Default 15s. */
  readonly timeoutMs: number;
  /** A VA attaching or detaching longer than this, with no error, counts as stuck. Default 5m. */
  readonly stuckAfterMs: number;
  readonly showHelp: boolean;
}

const defaults: DoctorFlags = {
  kubeconfig: "",
  csiAddress: "/run/csi/socket",
  output: "table",
  timeoutMs: 15_000,
  stuckAfterMs: 5 * 60_000,
  showHelp: false,
};

/** doctorUsage is the text of `csi-attacher doctor --help`. */
export function doctorUsage(): string {
  return [
    "Usage: csi-attacher doctor [flags]",
    "",
    "Prints one row per VolumeAttachment of the driver on --csi-address: node, PV,",
    "attached, error, age and, when the driver lists published nodes",
    "(LIST_VOLUMES_PUBLISHED_NODES), whether it agrees. Read-only: it never writes",
    "to the API and never calls ControllerPublish or ControllerUnpublish.",
    "Exit status: 0 all healthy, 1 something failed, is stuck or disagrees,",
    "2 bad flags, 3 the API server or the driver could not be read.",
    "",
    "Flags:",
    '  --kubeconfig string     kubeconfig path; empty means in-cluster (default "")',
    '  --csi-address string    the CSI driver\'s socket (default "/run/csi/socket")',
    '  --output string         "table" or "json" (default "table")',
    "  --timeout duration      deadline of each driver call (default 15s)",
    "  --stuck-after duration  attaching or detaching longer than this with no error is stuck (default 5m0s)",
    "  --help                  show this help",
  ].join("\n");
}

/**
 * parseDoctorFlags reads the doctor's command line with the attacher's
 * conventions (`-flag` or `--flag`, `=value` or the next argument, Go
 * durations) and fails with a FlagError naming the flag and the value.
 */
export function parseDoctorFlags(argv: readonly string[]): DoctorFlags {
  let flags: DoctorFlags = defaults;
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index] ?? "";
    const match = /^--?([a-z-]+)(?:=(.*))?$/s.exec(argument);
    if (!match) throw FlagError.strayArgument(argument);
    const name = match[1] ?? "";
    if (name === "help" || name === "h") {
      flags = { ...flags, showHelp: true };
      continue;
    }
    let text = match[2];
    if (text === undefined) {
      text = argv[index + 1];
      if (text === undefined) throw isKnown(name) ? FlagError.missingArgument(name) : FlagError.unknownFlag(name);
      index++;
    }
    flags = withFlag(flags, name, text);
  }
  return flags;
}

function isKnown(name: string): boolean {
  return ["kubeconfig", "csi-address", "output", "timeout", "stuck-after"].includes(name);
}

function withFlag(flags: DoctorFlags, name: string, text: string): DoctorFlags {
  switch (name) {
    case "kubeconfig":
      return { ...flags, kubeconfig: text };
    case "csi-address":
      return { ...flags, csiAddress: text.replace(/^unix:\/\//, "") };
    case "output":
      if (text !== "table" && text !== "json") throw FlagError.unreadable(name, text, 'must be "table" or "json"');
      return { ...flags, output: text };
    case "timeout":
      return { ...flags, timeoutMs: positiveDuration(name, text) };
    case "stuck-after":
      return { ...flags, stuckAfterMs: positiveDuration(name, text) };
    default:
      throw FlagError.unknownFlag(name);
  }
}

function positiveDuration(name: string, text: string): number {
  const ms = parseGoDuration(text);
  if (ms === undefined) throw FlagError.unreadable(name, text, "must be a Go duration such as 30s or 5m");
  if (ms <= 0) throw FlagError.unacceptable(name, text, "must be greater than zero");
  return ms;
}
