import { readlinkSync } from "node:fs";

/**
 * Names of zones that are UTC under every name tzdata gives it. A `TZ` or an
 * /etc/localtime link naming one of these means local time is UTC.
 */
const utcZoneNames: ReadonlySet<string> = new Set(["UTC", "UCT", "GMT", "Zulu", "Universal", "Greenwich", "UTC0", "GMT0", "Etc/UTC", "Etc/UCT", "Etc/GMT", "Etc/Zulu", "Etc/Universal", "Etc/Greenwich", "Etc/GMT0", "Etc/GMT+0", "Etc/GMT-0"]);

export interface HostTimeZoneOptions {
  /** The process environment (only `TZ` is read). Default: process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Returns the target of the symlink at `path`; throws when there is no
   * such link (a missing file, or a regular file). Default: fs.readlinkSync.
   */
  readonly readLink?: (path: string) => string;
}

/** resolveHostTimeZoneOptions fills the defaults of every optional field. */
function resolveHostTimeZoneOptions(options: HostTimeZoneOptions): Required<HostTimeZoneOptions> {
  return { env: options.env ?? process.env, readLink: options.readLink ?? readlinkSync };
}

/**
 * localTimeIsUtc says whether the host's local time is certainly UTC, read
 * the way Go's time package (and glibc) find the local zone: `TZ` when it is
 * set (empty means UTC), else /etc/localtime, and UTC when that is absent, as
 * in distroless and most container images.
 *
 * Why it matters: the first local-time call of the JavaScript engine
 * (`Date#getMonth`) loads ICU's time-zone data, ~12 ms of CPU before the
 * first log line (bun-csi-attacher#8), where the UTC getters cost nothing.
 * A zone it cannot prove to be UTC (a regular file at /etc/localtime, any
 * other name) answers false and keeps the engine's local time.
 */
export function localTimeIsUtc(options: HostTimeZoneOptions = {}): boolean {
  const { env, readLink } = resolveHostTimeZoneOptions(options);
  const tz = env["TZ"];
  // POSIX allows a leading ":" before a zone file name.
  if (tz !== undefined) return tz === "" || utcZoneNames.has(tz.replace(/^:/, ""));
  let target: string;
  try {
    target = readLink("/etc/localtime");
  } catch (e: unknown) {
    // No /etc/localtime means UTC; a regular file there (a copied zone) could be any zone.
    return (e as { code?: unknown } | null)?.code === "ENOENT";
  }
  const zone = /zoneinfo\/(?:posix\/)?(.+)$/.exec(target)?.[1];
  return zone !== undefined && utcZoneNames.has(zone);
}
