/**
 * Logger is the attacher's structured logger: a constant message with fields
 * beside it, printed like klog's text format (so operators' grep and log
 * pipelines keep working after swapping in this sidecar) or as one JSON object
 * a line with `--logging-format=json`.
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
  /** Clock for timestamps. Default: Date.now. */
  now?: () => number;
}

interface ResolvedLoggerOptions {
  verbosity: number;
  format: LogFormat;
  sink: LogSink;
  now: () => number;
}

function resolveLoggerOptions(options: LoggerOptions): ResolvedLoggerOptions {
  return {
    verbosity: options.verbosity ?? 0,
    format: options.format ?? "text",
    sink: options.sink ?? ((line) => process.stderr.write(line + "\n")),
    now: options.now ?? Date.now,
  };
}

/** A logger gated at one -v level: `log.v(4).info(...)`. */
export interface LeveledLogger {
  readonly enabled: boolean;
  info(message: string, fields?: LogFields): void;
}

const disabledLogger: LeveledLogger = { enabled: false, info: () => {} };

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

  /** Returns a logger that prints only when -v is at least `level`. */
  v(level: number): LeveledLogger {
    if (level > this.options.verbosity) return disabledLogger;
    return { enabled: true, info: (message, fields) => this.write("I", message, fields, level) };
  }

  info(message: string, fields?: LogFields): void {
    this.write("I", message, fields, 0);
  }

  warn(message: string, fields?: LogFields): void {
    this.write("W", message, fields, 0);
  }

  error(message: string, fields?: LogFields): void {
    this.write("E", message, fields, 0);
  }

  private write(severity: Severity, message: string, fields: LogFields | undefined, level: number): void {
    const all = fields ? { ...this.context, ...fields } : this.context;
    const time = this.options.now();
    const line =
      this.options.format === "json"
        ? formatJson(severity, time, level, message, all)
        : formatText(severity, time, message, all);
    this.options.sink(line);
  }
}

function formatJson(severity: Severity, time: number, level: number, message: string, fields: LogFields): string {
  const record: Record<string, unknown> = { ts: time / 1000, v: level, msg: message };
  for (const [key, value] of Object.entries(fields)) {
    record[key] = value instanceof Error ? value.message : value;
  }
  if (severity !== "I") record["severity"] = severity === "W" ? "warning" : "error";
  return JSON.stringify(record);
}

// klog's header: Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg
function formatText(severity: Severity, time: number, message: string, fields: LogFields): string {
  const date = new Date(time);
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  const header =
    `${severity}${pad(date.getUTCMonth() + 1)}${pad(date.getUTCDate())} ` +
    `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}.` +
    `${pad(date.getUTCMilliseconds() * 1000, 6)} ${String(process.pid).padStart(7)} attacher]`;
  let line = `${header} ${JSON.stringify(message)}`;
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    line += ` ${key}=${renderTextValue(value)}`;
  }
  return line;
}

function renderTextValue(value: unknown): string {
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (value instanceof Error) return JSON.stringify(value.message);
  if (typeof value === "string") return JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}
