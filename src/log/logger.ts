import { baseName, callSite, shortPath, type CallSite, type EntryPoint } from "./call-site";
import { klogTimestamp } from "./klog-timestamp";
import { localTimeIsUtc } from "./host-time-zone";
import { VModule, type VModuleRule } from "./vmodule";

/**
 * Logger is the attacher's structured logger: a constant message with fields
 * beside it, printed like klog's text format (so operators' grep and log
 * pipelines keep working after swapping in this sidecar) or, with
 * `--logging-format=json`, like Kubernetes component-base's JSON format.
 *
 * Verbosity follows upstream's -v meaning: 0 always, 2 operations, 4
 * decisions, 5 gRPC payloads (with secrets stripped before they get here).
 */
export type LogFields = Readonly<Record<string, unknown>>;

export type LogFormat = "text" | "json";

type Severity = "I" | "W" | "E";

/** Where formatted lines go; stderr by default, as klog does. */
export type LogSink = (line: string) => void;

export interface LoggerOptions {
  /** Highest -v level printed by `v(n).info`. Default 0. */
  verbosity?: number;
  /** Output format. Default "text". */
  format?: LogFormat;
  /** Destination of each line. Default: process.stderr. */
  sink?: LogSink;
  /** Clock for timestamps, in milliseconds since the epoch with a fraction (klog prints microseconds). Default: performance.timeOrigin + performance.now(). */
  now?: () => number;
  /** Process ID printed in the text header. Default: process.pid. */
  pid?: number;
  /** --vmodule: per-file levels above `verbosity` (rules, or a VModule already built from them). Default: none. */
  vmodule?: readonly VModuleRule[] | VModule;
  /**
   * Whether local time is UTC, so that the text header can be printed with
   * the UTC getters, which spare the engine loading its time-zone data.
   * Default: localTimeIsUtc() (TZ, else /etc/localtime).
   */
  localTimeIsUtc?: boolean;
}

interface ResolvedLoggerOptions {
  verbosity: number;
  format: LogFormat;
  sink: LogSink;
  now: () => number;
  pid: number;
  vmodule: VModule;
  localTimeIsUtc: boolean;
}

function resolveLoggerOptions(options: LoggerOptions): ResolvedLoggerOptions {
  return {
    verbosity: options.verbosity ?? 0,
    format: options.format ?? "text",
    sink: options.sink ?? ((line) => process.stderr.write(line + "\n")),
    now: options.now ?? preciseNow,
    pid: options.pid ?? process.pid,
    vmodule: options.vmodule instanceof VModule ? options.vmodule : new VModule(options.vmodule ?? []),
    localTimeIsUtc: options.localTimeIsUtc ?? localTimeIsUtc(),
  };
}

let clockOffset = performance.timeOrigin;

/**
 * preciseNow is the wall clock with microseconds, as klog prints it:
 * Date.now() has only milliseconds, so the fraction comes from the
 * monotonic performance.now(). That clock does not follow wall-clock steps
 * (NTP, a VM resumed), so it is re-anchored whenever the two part.
 */
function preciseNow(): number {
  const precise = clockOffset + performance.now();
  const wall = Date.now();
  if (Math.abs(precise - wall) < 1) return precise;
  clockOffset = wall - performance.now();
  return wall;
}

/** A logger gated at one -v level: `log.v(4).info(...)`. */
export interface LeveledLogger {
  readonly enabled: boolean;
  info(message: string, fields?: LogFields, site?: CallSite): void;
}

const disabledLogger: LeveledLogger = { enabled: false, info: () => {} };

/**
 * Each method's last parameter, `site`, is where the call was written. Code
 * never passes it: the compiled binary's build adds it to every call of a
 * logger method (scripts/build/log-call-sites.ts), so that printing a line
 * does not ask the engine for a stack (~20-25 µs a line under load, a few
 * per VA). Without it, as when run from source, the stack is read.
 */
export class Logger {
  private readonly options: ResolvedLoggerOptions;
  private readonly context: LogFields;

  constructor(options: LoggerOptions = {}, context: LogFields = {}) {
    this.options = resolveLoggerOptions(options);
    this.context = context;
  }

  /** Returns a child logger whose lines carry `fields` in addition. */
  with(fields: LogFields): Logger {
    // Resolved options are complete LoggerOptions, so resolving them again is a no-op.
    return new Logger(this.options, { ...this.context, ...fields });
  }

  /** Returns a logger that prints only when -v is at least `level`; a disabled one costs nothing per call. */
  v(level: number): LeveledLogger {
    // Each entry point hands itself to write(): the call site is the frame
    // that called it. Block bodies, so that no entry point is left by a tail
    // call before the stack is read.
    if (level <= this.options.verbosity) {
      const info = (message: string, fields?: LogFields, site?: CallSite): void => {
        this.write("I", message, fields, level, site ?? info);
      };
      return { enabled: true, info };
    }
    // Above -v, only a --vmodule rule for the calling file can enable the
    // line; the call site found for that question is the one printed, so
    // the stack is walked once.
    const { vmodule } = this.options;
    if (level > vmodule.maxVerbosity) return disabledLogger;
    const site = callSite(Logger.prototype.v);
    if (site === undefined || level > vmodule.verbosityOf(site.path)) return disabledLogger;
    return {
      enabled: true,
      info: (message, fields) => {
        this.write("I", message, fields, level, site);
      },
    };
  }

  info(message: string, fields?: LogFields, site?: CallSite): void {
    this.write("I", message, fields, 0, site ?? Logger.prototype.info);
  }

  warn(message: string, fields?: LogFields, site?: CallSite): void {
    this.write("W", message, fields, 0, site ?? Logger.prototype.warn);
  }

  error(message: string, fields?: LogFields, site?: CallSite): void {
    this.write("E", message, fields, 0, site ?? Logger.prototype.error);
  }

  /** write prints one line; `site` is where it was logged, or the entry point the logging code called. */
  private write(severity: Severity, message: string, fields: LogFields | undefined, level: number, site: CallSite | EntryPoint): void {
    // Only lines that are printed get here, so the stack is read off the hot path of disabled levels.
    const at = typeof site === "function" ? callSite(site) : site;
    const time = this.options.now();
    const line =
      this.options.format === "json"
        ? formatJson(severity, time, at, level, message, this.context, fields)
        : formatText(severity, time, this.options.localTimeIsUtc, this.options.pid, at, message, this.context, fields);
    this.options.sink(line);
  }
}

/**
 * formatJson writes component-base's JSON line (zapr over zap, as
 * `--logging-format=json` gives in Kubernetes components): `ts` in
 * milliseconds since the epoch with a fraction, `caller` as zap's short
 * caller (`dir/file:line`), `msg`, the logger's own fields, then `v` for
 * info lines (error lines have none), then the call's fields. Errors are
 * rendered as their message, as zap does for an `err` field.
 */
function formatJson(severity: Severity, time: number, site: CallSite | undefined, level: number, message: string, context: LogFields, fields: LogFields | undefined): string {
  const record: Record<string, unknown> = { ts: time };
  if (site) record["caller"] = `${shortPath(site.path)}:${site.line}`;
  record["msg"] = message;
  addJsonFields(record, context);
  if (severity !== "E") record["v"] = level;
  if (fields) addJsonFields(record, fields);
  return JSON.stringify(record);
}

function addJsonFields(record: Record<string, unknown>, fields: LogFields): void {
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    record[key] = value instanceof Error ? value.message : value;
  }
}

/**
 * formatText writes klog's header exactly: `Lmmdd hh:mm:ss.uuuuuu`, the
 * process ID right-aligned in 7 columns (klog keeps its last 7 digits), then
 * ` file:line] `, then the quoted message and key=value pairs as klog's
 * structured calls (InfoS/ErrorS) print them. Time is local time, as klog's.
 */
function formatText(severity: Severity, time: number, utc: boolean, pid: number, site: CallSite | undefined, message: string, context: LogFields, fields: LogFields | undefined): string {
  const location = site ? `${baseName(site.path)}:${site.line}` : "???:1";
  let line = `${severity}${klogTimestamp(time, utc)} ${String(pid % 10_000_000).padStart(7)} ${location}] ${JSON.stringify(message)}`;
  line += textFields(context);
  if (fields) line += textFields(fields);
  return line;
}

function textFields(fields: LogFields): string {
  let out = "";
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    out += ` ${key}=${renderTextValue(value)}`;
  }
  return out;
}

function renderTextValue(value: unknown): string {
  if (value === null) return "<nil>";
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  if (value instanceof Error) return renderTextString(value.message);
  if (typeof value === "string") return renderTextString(value);
  return JSON.stringify(value) ?? String(value);
}

/**
 * renderTextString quotes a one-line string; a multi-line one is printed as
 * klog does, each line indented by a tab between `<` and ` >`, so that stack
 * traces and driver messages stay readable.
 */
function renderTextString(value: string): string {
  if (!value.includes("\n")) return JSON.stringify(value);
  const body = value.endsWith("\n") ? value.slice(0, -1) : value;
  return `<\n\t${body.split("\n").join("\n\t")}\n >`;
}
