import type { Logger } from "../log/logger";
import { DrainDeadline } from "./drain-deadline";

export interface ShutdownSignalsOptions {
  /** --timeout: how long an in-flight CSI call may still take once a signal came. */
  readonly timeoutMs: number;
  /** The process logger: the signal received, and a drain that ran out. */
  readonly log: Logger;
  /** Ends the process with a code: main.ts's, the one place that exits. */
  readonly exit: (code: number) => never;
}

/**
 * Shutdown is how the attacher's work is stopped: by a stop signal, or by
 * the driver going away (see DriverLoss), which stops the work without
 * being a signal.
 */
export interface Shutdown {
  /** Aborts when the work must stop, for either reason: everything started after it drains and returns. */
  readonly work: AbortSignal;
  /** Aborts when SIGINT or SIGTERM came. */
  readonly signalled: AbortSignal;
  /** stopWork stops the work as a signal does (the same drain deadline), without counting as one. */
  readonly stopWork: () => void;
  /** drained says the work has stopped: the drain deadline is off (see DrainDeadline). */
  readonly drained: () => void;
}

/**
 * stopOnSignals turns SIGINT and SIGTERM into a stop of the work. A drain
 * that outlasts its deadline (DrainDeadline), or a second signal, exits at
 * once.
 */
export function stopOnSignals(options: ShutdownSignalsOptions): Shutdown {
  const { log, exit } = options;
  const stop = new AbortController();
  const signalled = new AbortController();
  const deadline = new DrainDeadline({ timeoutMs: options.timeoutMs, log, exit });
  const stopWork = () => {
    if (stop.signal.aborted) return;
    stop.abort();
    deadline.start();
  };
  // JS must handle them: Bun as PID 1 ignores SIGTERM otherwise.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      // A driver loss stopped the work already: a signal after it is still the first.
      if (signalled.signal.aborted) {
        // As Kubernetes components do: a second signal means "now".
        log.warn("Received second signal, exiting without waiting for in-flight operations", { signal });
        exit(1);
      }
      log.info("Received signal, shutting down", { signal, drainTimeout: `${deadline.ms}ms` });
      signalled.abort();
      stopWork();
    });
  }
  return { work: stop.signal, signalled: signalled.signal, stopWork, drained: () => deadline.drained() };
}
