import { formatGoDuration, parseGoDuration } from "./duration";

/**
 * The kinds of value a flag takes, each read with the syntax Go's `flag`
 * package (or the component-base value type upstream registers) accepts, so
 * that any value an operator copied from a Go sidecar's Deployment reads the
 * same here. A kind only reads text; what range of values a flag accepts is
 * its schema's business (src/cli/flag-table.ts).
 */

/** ReadResult is one occurrence of a flag read, or why its text is not of the kind. */
export type ReadResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

export interface FlagKind<T> {
  /** typeName is how Go's usage names the value ("" for a boolean, which takes none; "value" for Go's flag.Value types). */
  readonly typeName: string;
  /** isBool flags are true when bare and never take the next argument as their value. */
  readonly isBool: boolean;
  /**
   * read parses one occurrence. `previous` is the value an earlier occurrence
   * of the same flag left: map-like flags merge into it as Go's do, the rest
   * ignore it (the last occurrence wins).
   */
  read(text: string, previous: T | undefined): ReadResult<T>;
  /** show prints a value as Go's usage prints a default; "" for the zero value, which usage leaves out. */
  show(value: T): string;
}

const ok = <T>(value: T): ReadResult<T> => ({ ok: true, value });
const rejected = <T>(reason: string): ReadResult<T> => ({ ok: false, reason });

export const stringKind: FlagKind<string> = {
  typeName: "string",
  isBool: false,
  read: (text) => ok(text),
  show: (value) => (value === "" ? "" : JSON.stringify(value)),
};

// strconv.ParseBool's spellings.
const trueSpellings = new Set(["1", "t", "T", "true", "TRUE", "True"]);
const falseSpellings = new Set(["0", "f", "F", "false", "FALSE", "False"]);

export const boolKind: FlagKind<boolean> = {
  typeName: "",
  isBool: true,
  read: (text) => {
    if (trueSpellings.has(text)) return ok(true);
    if (falseSpellings.has(text)) return ok(false);
    return rejected("not a boolean; use true or false");
  },
  show: (value) => (value ? "true" : ""),
};

/**
 * parseGoInteger reads strconv.ParseInt/ParseUint with base 0, as Go's int
 * and uint flags do: decimal, 0x hex, 0o or leading-0 octal, 0b binary, with
 * `_` between digits when a prefix is given.
 */
function parseGoInteger(text: string): number | undefined {
  const match = /^([+-]?)(0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|0[0-7_]*|[1-9][0-9]*)$/.exec(text);
  if (!match) return undefined;
  const [, sign = "", body = ""] = match;
  // Underscores are allowed only after a base prefix (including the bare leading 0 of octal), and never doubled or trailing.
  if (body.includes("_") && (/__|_$/.test(body) || !/^0/.test(body))) return undefined;
  const digits = body.replaceAll("_", "");
  let value: number;
  if (/^0[xX]/.test(digits)) value = Number.parseInt(digits.slice(2), 16);
  else if (/^0[oO]/.test(digits)) value = Number.parseInt(digits.slice(2), 8);
  else if (/^0[bB]/.test(digits)) value = Number.parseInt(digits.slice(2), 2);
  else if (digits.length > 1 && digits.startsWith("0")) value = Number.parseInt(digits.slice(1), 8);
  else value = Number.parseInt(digits, 10);
  if (!Number.isSafeInteger(value)) return undefined;
  return sign === "-" ? -value : value;
}

export const intKind: FlagKind<number> = {
  typeName: "int",
  isBool: false,
  read: (text) => {
    const value = parseGoInteger(text);
    return value === undefined ? rejected("not a whole number") : ok(value);
  },
  show: (value) => (value === 0 ? "" : String(value)),
};

export const uintKind: FlagKind<number> = {
  typeName: "uint",
  isBool: false,
  read: (text) => {
    const value = text.startsWith("-") || text.startsWith("+") ? undefined : parseGoInteger(text);
    return value === undefined ? rejected("not a whole number of 0 or more") : ok(value);
  },
  show: (value) => (value === 0 ? "" : String(value)),
};

/** -v is a klog verbosity level: an unsigned number that fits into int32. */
export const verbosityKind: FlagKind<number> = {
  typeName: "value",
  isBool: false,
  read: (text) => {
    const value = text.startsWith("-") || text.startsWith("+") ? undefined : parseGoInteger(text);
    return value === undefined || value > 2 ** 31 - 1 ? rejected("not a verbosity level; use a whole number from 0") : ok(value);
  },
  show: (value) => (value === 0 ? "" : String(value)),
};

export const floatKind: FlagKind<number> = {
  typeName: "float",
  isBool: false,
  read: (text) => {
    // strconv.ParseFloat's decimal forms; NaN and Inf make no sense for any flag here.
    if (!/^[+-]?(\d[\d_]*(\.[\d_]*)?|\.\d[\d_]*)([eE][+-]?\d+)?$/.test(text)) return rejected("not a number");
    return ok(Number(text.replaceAll("_", "")));
  },
  show: (value) => (value === 0 ? "" : String(value)),
};

/** Durations are held in milliseconds; the text is Go's time.ParseDuration syntax. */
export const durationKind: FlagKind<number> = {
  typeName: "duration",
  isBool: false,
  read: (text) => {
    const ms = parseGoDuration(text);
    return ms === undefined ? rejected("not a duration; use Go syntax such as 15s, 1m30s or 500ms") : ok(ms);
  },
  show: (value) => (value === 0 ? "" : formatGoDuration(value)),
};

/**
 * labelsKind reads csi-lib-utils' `key:value,key2:value2` label list. Every
 * item must split into exactly two parts, as upstream requires (so an empty
 * value is malformed too); occurrences add to the labels given before.
 */
export const labelsKind: FlagKind<Readonly<Record<string, string>>> = {
  typeName: "value",
  isBool: false,
  read: (text, previous) => {
    const labels: Record<string, string> = { ...previous };
    for (const item of text.split(",")) {
      const parts = item.split(":");
      const [key, value] = parts;
      if (parts.length !== 2 || key === undefined || value === undefined) {
        return rejected(`malformed item in list of labels: ${JSON.stringify(item)}; use key:value,key2:value2`);
      }
      labels[key] = value;
    }
    return ok(labels);
  },
  show: (value) => (Object.keys(value).length === 0 ? "" : JSON.stringify(value)),
};

/**
 * keyBoolMapKind reads component-base's MapStringBool (`--feature-gates`):
 * comma-separated `key=bool` pairs, empty items skipped; occurrences add to
 * the pairs given before. Whether a key is known is the schema's business.
 */
export const keyBoolMapKind: FlagKind<Readonly<Record<string, boolean>>> = {
  typeName: "value",
  isBool: false,
  read: (text, previous) => {
    const pairs: Record<string, boolean> = { ...previous };
    for (const item of text.split(",")) {
      const pair = item.trim();
      if (pair === "") continue;
      const equals = pair.indexOf("=");
      if (equals === -1) return rejected(`malformed pair ${JSON.stringify(pair)}; use Name=true or Name=false`);
      const key = pair.slice(0, equals).trim();
      const setting = boolKind.read(pair.slice(equals + 1).trim(), undefined);
      if (!setting.ok) return rejected(`${JSON.stringify(pair)}: ${setting.reason}`);
      pairs[key] = setting.value;
    }
    return ok(pairs);
  },
  show: (value) =>
    Object.entries(value)
      .map(([key, setting]) => `${key}=${setting}`)
      .join(","),
};

/** VModuleItem is one `pattern=N` entry of --vmodule. */
export interface VModuleItem {
  readonly pattern: string;
  readonly verbosity: number;
}

/** vmoduleKind reads klog's `pattern=N,pattern2=M` list; occurrences add to the entries given before. */
export const vmoduleKind: FlagKind<readonly VModuleItem[]> = {
  typeName: "value",
  isBool: false,
  read: (text, previous) => {
    const items: VModuleItem[] = [...(previous ?? [])];
    for (const entry of text.split(",")) {
      if (entry === "") continue;
      const parts = entry.split("=");
      const [pattern = "", level = ""] = parts;
      if (parts.length !== 2 || pattern === "" || !/^\d+$/.test(level) || Number(level) > 2 ** 31 - 1) {
        return rejected(`${JSON.stringify(entry)} does not have the pattern=N format`);
      }
      items.push({ pattern, verbosity: Number(level) });
    }
    return ok(items);
  },
  show: (value) => value.map((item) => `${item.pattern}=${item.verbosity}`).join(","),
};

const quantitySuffixes: Readonly<Record<string, number>> = {
  "": 1,
  k: 1e3,
  // The flags' help text says "1K", though Kubernetes quantities spell it "1k"; take both.
  K: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** quantityKind reads a Kubernetes resource quantity of bytes (512, 1K, 2Ki, 3M, 5Mi, 1e3). */
export const quantityKind: FlagKind<number> = {
  typeName: "value",
  isBool: false,
  read: (text) => {
    const match = /^(\d+(?:\.\d*)?|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|k|K|M|G|T|P|E|)|[eE]([+-]?\d+))$/.exec(text);
    const [, amount, suffix, exponent] = match ?? [];
    const multiplier = exponent !== undefined ? 10 ** Number(exponent) : quantitySuffixes[suffix ?? ""];
    if (amount === undefined || multiplier === undefined) {
      return rejected("not a quantity; use bytes (512), multiples of 1000 (1K) or of 1024 (2Ki)");
    }
    return ok(Number(amount) * multiplier);
  },
  show: (value) => (value === 0 ? "" : String(value)),
};
