import type * as v from "valibot";
import type { FlagKind } from "./flag-kinds";

/**
 * FlagDefinition is one command-line flag: everything about it in one place,
 * so a flag cannot be half-added. `Config` (src/cli/config.ts) is derived from
 * these entries' `field` names and schema outputs.
 */
export interface FlagDefinition<Field extends string, Read, Value> {
  /** The flag's name without dashes, as upstream registers it. */
  readonly name: string;
  /** Other spellings that mean the same flag (Go answers -h like -help). */
  readonly aliases?: readonly string[];
  /**
   * The Config field the flag sets. Two flags may share one field when one is
   * a deprecated spelling of the other; then at most one of them may be given
   * a non-default value.
   */
  readonly field: Field;
  /** How the flag's text is read. */
  readonly kind: FlagKind<Read>;
  /** Upstream's default, as the kind reads it. */
  readonly defaultValue: Read;
  /** Upstream's help text, shown by --help. */
  readonly help: string;
  /** What values are accepted (its messages say so) and how they become the Config field. */
  readonly schema: v.GenericSchema<Read, Value>;
}

/**
 * defineFlag keeps each entry's literal field name and value types, so that a
 * table's settings type (Config, DoctorFlags) is derived from its entries.
 */
export function defineFlag<const Field extends string, Read, Value>(definition: FlagDefinition<Field, Read, Value>): FlagDefinition<Field, Read, Value> {
  return definition;
}

/** SomeFlag is an entry seen through the shape all entries share, for code that treats them alike. */
export type SomeFlag = FlagDefinition<string, unknown, unknown>;

/** indexFlagsByName maps every spelling of a table's flags (name and aliases) to its entry, as parseArgv looks them up. */
export function indexFlagsByName(table: readonly SomeFlag[]): ReadonlyMap<string, SomeFlag> {
  return new Map(table.flatMap((flag): [string, SomeFlag][] => [flag.name, ...(flag.aliases ?? [])].map((name) => [name, flag])));
}
