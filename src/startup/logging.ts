import type { Config } from "../cli/config";
import { gitCommit, platform, version } from "../cli/version";
import { Logger } from "../log/logger";
import { memoryLimitFields, readOwnMemoryLimit } from "../util/cgroup-memory-limit";

export interface LoggingOptions {
  /** -v, --logging-format and --vmodule decide what is printed and how. */
  readonly config: Pick<Config, "verbosity" | "loggingFormat" | "vmodule">;
}

/**
 * startLogging builds the process logger and opens the log as upstream
 * does: the version first, then (at -v=2) the memory limit the process
 * runs under.
 */
export function startLogging(options: LoggingOptions): Logger {
  const { config } = options;
  const log = new Logger({ verbosity: config.verbosity, format: config.loggingFormat, vmodule: config.vmodule });
  log.info("Version", { version, commit: gitCommit, platform });
  // Only read when it is logged: the walk over the cgroup files is start-up work nothing else needs.
  const memoryLog = log.v(2);
  if (memoryLog.enabled) memoryLog.info("Memory limit", memoryLimitFields(readOwnMemoryLimit(), process.execArgv));
  return log;
}
