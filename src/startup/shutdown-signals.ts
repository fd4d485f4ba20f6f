import type { Logger } from "../log/logger";

export interface ShutdownSignalsOptions {
  /** --timeout: how long an in-flight CSI call may still take once a signal came. */
  readonly timeoutMs: number;
  /** The process logger: the signal received, and a drain that ran out. */
  readonly log: Logger;
  /** Ends the process with a code: main.ts's, the one place that exits. */
  readonly exit: (code: number) => never;
}

/** Time allowed after --timeout for the last operations' API writes when shutting down. */
const shutdownGraceMs = 5_000;

/**
 * stopOnSignals turns SIGINT and SIGTERM into the returned signal's abort,
 * so that everything started after it drains and returns. A drain that
 * outlasts --timeout plus a grace period, or a second signal, exits at once.
 */
export function stopOnSignals(options: ShutdownSignalsOptions): AbortSignal {
  const { log, exit } = options;
  const stop = new AbortController();
  // In-flight CSI calls end within --timeout; the API writes that record
  // their outcome follow at once. Past that, something is stuck.
  const drainMs = options.timeoutMs + shutdownGraceMs;
  // JS must handle them: Bun as PID 1 ignores SIGTERM otherwise.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      if (stop.signal.aborted) {
        // As Kubernetes components do: a second signal means "now".
        log.warn("Received second signal, exiting without waiting for in-flight operations", { signal });
        exit(1);
      }
      log.info("Received signal, shutting down", { signal, drainTimeout: `${drainMs}ms` });
      stop.abort();
      setTimeout(() => {
        log.error("In-flight operations did not finish in time, exiting", { drainTimeout: `${drainMs}ms` });
        exit(1);
      }, drainMs).unref();
    });
  }
  return stop.signal;
}
