import * as v from "valibot";
import { parseGoDuration, formatGoDuration } from "./duration";
import { FlagError } from "./errors";
import { flagTable, type FlagDefinition } from "./flag-table";
import { parseArgv } from "./parse-argv";
import type { LogFormat } from "../log/logger";

/** Config is the validated command line the rest of the attacher runs on. */
export interface Config {
  /** Path of the CSI driver's Unix socket (a `unix://` prefix removed). */
  readonly csiAddress: string;
  /** Kubeconfig path; empty means in-cluster configuration. */
  readonly kubeconfig: string;
  readonly resyncMs: number;
  readonly timeoutMs: number;
  readonly retryIntervalStartMs: number;
  readonly retryIntervalMaxMs: number;
  readonly workerThreads: number;
  readonly defaultFsType: string;
  readonly loggingFormat: LogFormat;
  readonly verbosity: number;
  readonly showVersion: boolean;
  readonly showHelp: boolean;
}

const positiveDuration = v.pipe(v.number(), v.minValue(1));

// One schema per setting so that a failure is reported against its flag.
const settingSchemas = {
  "csi-address": v.pipe(v.string(), v.nonEmpty("must not be empty")),
  kubeconfig: v.string(),
  resync: positiveDuration,
  timeout: positiveDuration,
  "retry-interval-start": positiveDuration,
  "retry-interval-max": positiveDuration,
  "worker-threads": v.pipe(v.number(), v.integer(), v.minValue(1, "must be at least 1")),
  "default-fstype": v.string(),
  "logging-format": v.picklist(["text", "json"], 'accepted values are "text" and "json"'),
  v: v.pipe(v.number(), v.integer(), v.minValue(0, "must be 0 or more")),
  version: v.boolean(),
  help: v.boolean(),
} satisfies Record<string, v.GenericSchema>;

type SettingName = keyof typeof settingSchemas;

function convert(definition: FlagDefinition, raw: string): unknown {
  switch (definition.kind) {
    case "string":
      return raw;
    case "duration": {
      const ms = parseGoDuration(raw);
      if (ms === undefined) {
        throw new FlagError(definition.name, `${JSON.stringify(raw)} is not a duration; use Go syntax such as 15s, 1m30s or 500ms`);
      }
      return ms;
    }
    case "int": {
      if (!/^[+-]?\d+$/.test(raw)) throw new FlagError(definition.name, `${JSON.stringify(raw)} is not a whole number`);
      return Number(raw);
    }
    case "bool": {
      // Go's strconv.ParseBool spellings.
      if (["1", "t", "T", "true", "TRUE", "True"].includes(raw)) return true;
      if (["0", "f", "F", "false", "FALSE", "False"].includes(raw)) return false;
      throw new FlagError(definition.name, `${JSON.stringify(raw)} is not a boolean; use true or false`);
    }
  }
}

function validated<N extends SettingName>(name: N, value: unknown, raw: string): v.InferOutput<(typeof settingSchemas)[N]> {
  const result = v.safeParse(settingSchemas[name], value);
  if (!result.success) {
    const reason = result.issues[0]?.message ?? "invalid value";
    const shown = typeof value === "number" && raw !== String(value) ? `${raw} (${formatGoDuration(value)})` : raw;
    throw new FlagError(name, `${JSON.stringify(shown)}: ${reason}`);
  }
  return result.output as v.InferOutput<(typeof settingSchemas)[N]>;
}

/** parseConfig turns argv (without the program name) into a Config or throws a FlagError. */
export function parseConfig(argv: readonly string[]): Config {
  const given = parseArgv(argv);
  const settings = new Map<string, unknown>();
  for (const definition of flagTable) {
    const raw = given.get(definition.name) ?? definition.defaultValue;
    const name = definition.name as SettingName;
    settings.set(name, validated(name, convert(definition, raw), raw));
  }
  const get = <N extends SettingName>(name: N) => settings.get(name) as v.InferOutput<(typeof settingSchemas)[N]>;

  const retryIntervalStartMs = get("retry-interval-start");
  const retryIntervalMaxMs = get("retry-interval-max");
  if (retryIntervalMaxMs < retryIntervalStartMs) {
    throw new FlagError("retry-interval-max", `${formatGoDuration(retryIntervalMaxMs)} is shorter than --retry-interval-start ${formatGoDuration(retryIntervalStartMs)}`);
  }
  return {
    // Upstream accepts both a path and a unix:// URL for the socket.
    csiAddress: get("csi-address").replace(/^unix:\/\//, ""),
    kubeconfig: get("kubeconfig"),
    resyncMs: get("resync"),
    timeoutMs: get("timeout"),
    retryIntervalStartMs,
    retryIntervalMaxMs,
    workerThreads: get("worker-threads"),
    defaultFsType: get("default-fstype"),
    loggingFormat: get("logging-format"),
    verbosity: get("v"),
    showVersion: get("version"),
    showHelp: get("help"),
  };
}

/** usage renders --help from the flag table. */
export function usage(): string {
  const lines = ["Usage of csi-attacher:"];
  for (const flag of flagTable) {
    const shownDefault = flag.defaultValue === "" || flag.kind === "bool" ? "" : ` (default ${flag.defaultValue})`;
    lines.push(`  --${flag.name} ${flag.kind === "bool" ? "" : flag.kind}`.trimEnd(), `\t${flag.help}${shownDefault}`);
  }
  return lines.join("\n");
}
