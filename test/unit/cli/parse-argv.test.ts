import { describe, expect, it } from "bun:test";
import * as v from "valibot";
import { FlagError } from "../../../src/cli/errors";
import { boolKind, stringKind } from "../../../src/cli/flag-kinds";
import { indexFlagsByName, type SomeFlag } from "../../../src/cli/flag-definition";
import { flags } from "../../../src/cli/flag-table";
import { parseArgv } from "../../../src/cli/parse-argv";

const name: SomeFlag = { name: "name", field: "name", kind: stringKind, defaultValue: "", help: "A name.", schema: v.string() };
const quiet: SomeFlag = { name: "quiet", aliases: ["q"], field: "quiet", kind: boolKind, defaultValue: false, help: "Say less.", schema: v.boolean() };
const otherTable = indexFlagsByName([name, quiet]);

describe("parseArgv", () => {
  it("reads the attacher's flags against the attacher's table", () => {
    const occurrences = parseArgv(["--csi-address", "/s", "-h"], indexFlagsByName(flags));
    // The fields are the attacher's Config fields, so these are its table's entries.
    expect(occurrences.map(({ flag, text }) => [flag.field, text])).toEqual([
      ["csiAddress", "/s"],
      ["showHelp", "true"],
    ]);
  });

  it("reads against the table it is given, aliases included, with the same argv rules", () => {
    expect(parseArgv(["-q", "--name", "-x", "--quiet=false"], otherTable)).toEqual([
      { flag: quiet, text: "true" },
      { flag: name, text: "-x" },
      { flag: quiet, text: "false" },
    ]);
  });

  it("a flag of the attacher's table is unknown to another table", () => {
    let error: unknown;
    try {
      parseArgv(["--csi-address=/s"], otherTable);
    } catch (e: unknown) {
      error = e;
    }
    expect(error instanceof FlagError ? [error.message, error.exitCode] : error).toEqual(["flag provided but not defined: --csi-address (--help lists the flags)", 2]);
  });
});
