import * as v from "valibot";
import { FlagError } from "./errors";
import { indexFlagsByName, type SomeFlag } from "./flag-definition";
import { parseArgv } from "./parse-argv";

/** ValidatedFlag is one table entry's value after its kind read it and its schema accepted it. */
export interface ValidatedFlag {
  readonly flag: SomeFlag;
  /** The schema's output: what the settings field holds. */
  readonly value: unknown;
}

/**
 * validatedFlags reads argv against one flag table: parseArgv splits it, each
 * occurrence is read by its flag's kind (a repeated flag sees the value read
 * so far: maps and -v accumulate), and every entry of the table, defaults
 * too, is validated by its schema, in table order. It throws a FlagError
 * naming the flag and its text. The attacher and the doctor both read their
 * command lines through it, so they cannot drift apart.
 */
export function validatedFlags(argv: readonly string[], table: readonly SomeFlag[]): ValidatedFlag[] {
  const given = new Map<SomeFlag, { text: string; read: unknown }>();
  for (const { flag, text } of parseArgv(argv, indexFlagsByName(table))) {
    const result = flag.kind.read(text, given.get(flag)?.read);
    if (!result.ok) throw FlagError.unreadable(flag.name, text, result.reason);
    given.set(flag, { text, read: result.value });
  }
  return table.map((flag) => {
    const occurrence = given.get(flag);
    const result = v.safeParse(flag.schema, occurrence ? occurrence.read : flag.defaultValue);
    if (!result.success) {
      throw FlagError.unacceptable(flag.name, occurrence?.text ?? flag.kind.show(flag.defaultValue), result.issues[0]?.message ?? "invalid value");
    }
    return { flag, value: result.output };
  });
}
