import { realClock, type Clock } from "./clock";

/**
 * withDeadline runs `fn` with a signal that aborts when `parent` does or when
 * `timeoutMs` passes, and unlinks both as soon as `fn` settles.
 *
 * Not `AbortSignal.any([parent, AbortSignal.timeout(ms)])`: in Bun a signal
 * made by AbortSignal.any from a long-lived parent is kept alive, with all
 * its abort listeners hold (fetch adds one per request), until one of its
 * sources aborts. The process-lifetime parent never does, so each watch's
 * signal lived until its timer fired minutes later; without a timer it
 * lives forever (about 1 KiB per call, measured). Here the parent holds our
 * listener only while `fn` runs.
 */
export async function withDeadline<T>(parent: AbortSignal, timeoutMs: number, fn: (signal: AbortSignal) => Promise<T>, clock: Clock = realClock): Promise<T> {
  const controller = new AbortController();
  const abort = () => controller.abort(parent.aborted ? parent.reason : new DOMException("deadline exceeded", "TimeoutError"));
  if (parent.aborted) abort();
  parent.addEventListener("abort", abort, { once: true });
  const timer = clock.setTimeout(abort, Math.max(0, timeoutMs));
  try {
    return await fn(controller.signal);
  } finally {
    clock.clearTimeout(timer);
    parent.removeEventListener("abort", abort);
  }
}
