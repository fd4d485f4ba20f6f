import * as v from "valibot";
import { FlagError } from "../cli/errors";
import type { SomeFlag } from "../cli/flag-table";
import { parseArgv } from "../cli/parse-argv";
import { flagDefaults } from "../cli/usage";
import { doctorFlags, doctorFlagsByName, type DoctorFlagDefinition } from "./doctor-flag-table";

/**
 * DoctorFlags are the settings of `csi-attacher doctor`: one read-only field
 * per entry of the doctor's flag table (src/doctor/doctor-flag-table.ts),
 * typed by that entry's schema output.
 */
export type DoctorFlags = { readonly [Flag in DoctorFlagDefinition as Flag["field"]]: v.InferOutput<Flag["schema"]> };

/** doctorUsage is the text of `csi-attacher doctor --help`; its flag list is the doctor's table in the attacher's --help layout. */
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
    flagDefaults(doctorFlags),
  ].join("\n");
}

/**
 * parseDoctorFlags reads the doctor's command line against its flag table
 * with the attacher's argv rules (parseArgv: `-flag` or `--flag`, `=value` or
 * the next argument, bare booleans), reads each value by its flag's kind and
 * validates every flag, defaults too, with its schema; it fails with a
 * FlagError naming the flag and the value.
 */
export function parseDoctorFlags(argv: readonly string[]): DoctorFlags {
  const given = new Map<SomeFlag, { text: string; read: unknown }>();
  for (const { flag, text } of parseArgv(argv, doctorFlagsByName)) {
    const result = flag.kind.read(text, given.get(flag)?.read);
    if (!result.ok) throw FlagError.unreadable(flag.name, text, result.reason);
    given.set(flag, { text, read: result.value });
  }
  const fields = doctorFlags.map((flag): [string, unknown] => {
    const occurrence = given.get(flag);
    const result = v.safeParse(flag.schema, occurrence ? occurrence.read : flag.defaultValue);
    if (!result.success) {
      throw FlagError.unacceptable(flag.name, occurrence?.text ?? flag.kind.show(flag.defaultValue), result.issues[0]?.message ?? "invalid value");
    }
    return [flag.field, result.output];
  });
  return Object.fromEntries(fields) as DoctorFlags;
}
