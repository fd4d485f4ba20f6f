import type * as v from "valibot";
import { flagDefaults } from "../cli/usage";
import { validatedFlags } from "../cli/validated-flags";
import { doctorFlags, type DoctorFlagDefinition } from "./doctor-flag-table";

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
  return Object.fromEntries(validatedFlags(argv, doctorFlags).map(({ flag, value }) => [flag.field, value])) as DoctorFlags;
}
