import type { WorkQueue } from "./work-queue";

/**
 * runWorkerPool processes `queue`'s items with at most `workers` at once,
 * as client-go controllers do with `workers` goroutines looping on Get, and
 * resolves once the queue is shut down and every item taken has been
 * processed. It calls `work` for an item and then `done`, always.
 *
 * Unlike `workers` loops parked in `get`, it keeps one `get` pending, and an
 * item only costs a running call while it is processed: with
 * `--worker-threads=1000` an idle attacher holds one waiting promise per
 * queue, not a thousand, and start-up pays nothing per worker.
 *
 * State, and why it is enough:
 *   running = the number of items taken from the queue and not yet done;
 *   running <= workers, because the loop asks for an item only with a
 *   slot free and counts it before asking again;
 *   `slotFreed` is set only while the loop waits for a slot (running ===
 *   workers), and the first item to finish calls it.
 * Items after shutDown are handed back at once, unprocessed, as upstream's
 * workers stop taking work: the next leader or start resyncs them.
 */
export async function runWorkerPool<T>(queue: WorkQueue<T>, workers: number, work: (item: T) => Promise<void>): Promise<void> {
  const slots = Math.max(1, workers);
  let running = 0;
  let slotFreed: (() => void) | undefined;
  let allDone: (() => void) | undefined;
  const finish = (item: T) => {
    queue.done(item);
    running--;
    const wake = slotFreed;
    slotFreed = undefined;
    wake?.();
    if (running === 0) allDone?.();
  };
  for (;;) {
    if (running >= slots) await new Promise<void>((resolve) => (slotFreed = resolve));
    const next = await queue.get();
    if (next.shutdown) break;
    if (queue.shuttingDown()) {
      queue.done(next.item);
      break;
    }
    running++;
    const item = next.item;
    // work owns its errors (the controller re-queues them with back-off):
    // a rejection reaching here is a bug, left to surface as an unhandled one.
    void work(item).finally(() => finish(item));
  }
  if (running > 0) await new Promise<void>((resolve) => (allDone = resolve));
}
