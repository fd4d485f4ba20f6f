import * as v from "valibot";
import { leaseTimingProblem } from "../leader/leader-election-options";
import { jitterFactor } from "../leader/lease-decisions";
import { formatGoDuration } from "./duration";
import { FlagError } from "./errors";
import { flags, type AnyFlag } from "./flag-table";
import { validatedFlags, type ValidatedFlag } from "./validated-flags";

/**
 * Config is the validated command line the rest of the attacher runs on: one
 * read-only field per flag-table entry (`field`), typed by that entry's schema
 * output, so a flag added to the table is in Config and nowhere else.
 */
export type Config = { readonly [Flag in AnyFlag as Flag["field"]]: v.InferOutput<Flag["schema"]> };

/**
 * parseConfig turns argv (without the program name) into a Config or throws
 * a FlagError: it reads each occurrence by its flag's kind, validates every
 * flag (defaults too) with its schema, then checks what involves several
 * flags.
 */
export function parseConfig(argv: readonly string[]): Config {
  const fields = new Map<string, ValidatedFlag>();
  for (const { flag, value } of validatedFlags(argv, flags)) {
    // Flags sharing a field (a deprecated spelling and its successor): the one
    // given a value sets it; both given one is an error, as upstream refuses to guess.
    const earlier = fields.get(flag.field);
    if (earlier === undefined) {
      fields.set(flag.field, { flag, value });
    } else if (isSet(earlier.value) && isSet(value)) {
      throw FlagError.conflict(flag.name, String(value), earlier.flag.name, String(earlier.value));
    } else if (isSet(value)) {
      fields.set(flag.field, { flag, value });
    }
  }

  const config = Object.fromEntries([...fields].map(([field, { value }]) => [field, value])) as Config;
  checkAcrossFlags(config);
  return config;
}

/** isSet tells a shared field's value from its empty default (only string fields are shared). */
function isSet(value: unknown): boolean {
  return value !== "";
}

/** checkAcrossFlags rejects combinations each flag alone cannot see. */
function checkAcrossFlags(config: Config): void {
  if (config.retryIntervalMaxMs < config.retryIntervalStartMs) {
    throw FlagError.unacceptable(
      "retry-interval-max",
      formatGoDuration(config.retryIntervalMaxMs),
      `shorter than --retry-interval-start ${formatGoDuration(config.retryIntervalStartMs)}`,
    );
  }
  // client-go's leader elector refuses these timings when it starts (upstream then exits 1); say so before anything runs.
  if (config.leaderElection) {
    const { leaderElectionLeaseDurationMs: lease, leaderElectionRenewDeadlineMs: renew, leaderElectionRetryPeriodMs: retry } = config;
    const problem = leaseTimingProblem(lease, renew, retry);
    if (problem === "lease-not-longer-than-renew-deadline") {
      throw FlagError.unacceptable("leader-election-lease-duration", formatGoDuration(lease), `must be longer than --leader-election-renew-deadline ${formatGoDuration(renew)}`);
    }
    if (problem === "renew-deadline-not-longer-than-jittered-retry") {
      throw FlagError.unacceptable(
        "leader-election-renew-deadline",
        formatGoDuration(renew),
        `must be longer than ${jitterFactor} x --leader-election-retry-period ${formatGoDuration(retry)}`,
      );
    }
  }
  // component-base: per-file verbosity only exists in the text format.
  if (config.vmodule.length > 0 && config.loggingFormat !== "text") {
    throw FlagError.unacceptable("vmodule", config.vmodule.map((item) => `${item.pattern}=${item.verbosity}`).join(","), "only supported for text log format");
  }
}
