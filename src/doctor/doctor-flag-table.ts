import * as v from "valibot";
import { boolKind, durationKind, stringKind } from "../cli/flag-kinds";
import { defineFlag, type SomeFlag } from "../cli/flag-definition";
import { csiSocketAddress, positiveDuration } from "../cli/shared-flag-schemas";

/**
 * doctorFlagTable lists every flag of `csi-attacher doctor`, in the attacher's
 * FlagDefinition shape: parsing, validation, defaults and the --help list are
 * all derived from it, so a doctor flag cannot be half-added. The doctor's
 * flags are its own: the attacher's (e.g. --leader-election) mean nothing here.
 */
export const doctorFlagTable = [
  defineFlag({
    name: "kubeconfig",
    field: "kubeconfig",
    kind: stringKind,
    defaultValue: "",
    help: "Absolute path to the kubeconfig file; empty means in-cluster.",
    schema: v.string(),
  }),
  defineFlag({
    name: "csi-address",
    field: "csiAddress",
    kind: stringKind,
    defaultValue: "/run/csi/socket",
    help: "Address of the CSI driver socket whose VolumeAttachments are checked.",
    schema: csiSocketAddress,
  }),
  defineFlag({
    name: "output",
    field: "output",
    kind: stringKind,
    defaultValue: "table",
    help: 'Report format: "table" or "json".',
    schema: v.picklist(["table", "json"], 'must be "table" or "json"'),
  }),
  defineFlag({
    name: "timeout",
    field: "timeoutMs",
    kind: durationKind,
    defaultValue: 15_000,
    help: "Deadline of each driver call, and of all ListVolumes pages together.",
    schema: positiveDuration,
  }),
  defineFlag({
    name: "stuck-after",
    field: "stuckAfterMs",
    kind: durationKind,
    defaultValue: 5 * 60_000,
    help: "A VolumeAttachment attaching or detaching longer than this, with no error, counts as stuck.",
    schema: positiveDuration,
  }),
  defineFlag({ name: "help", aliases: ["h"], field: "showHelp", kind: boolKind, defaultValue: false, help: "Show this help and exit.", schema: v.boolean() }),
] as const;

/** DoctorFlagDefinition is any entry of the doctor's table with its precise types (what DoctorFlags is derived from). */
export type DoctorFlagDefinition = (typeof doctorFlagTable)[number];

/** doctorFlags is the doctor's table for loops that read, validate or print every entry alike. */
export const doctorFlags: readonly SomeFlag[] = doctorFlagTable;
