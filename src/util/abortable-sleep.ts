import { realClock, type Clock } from "./clock";

/**
 * abortableSleep waits `ms`, or less if `signal` aborts first: every retry
 * loop in the attacher must stop promptly on SIGTERM rather than finish its
 * back-off. `clock` lets a test step time instead of waiting it out.
 */
export function abortableSleep(ms: number, signal: AbortSignal, clock: Clock = realClock): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const done = () => {
      clock.clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = clock.setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
