/**
 * A worker pool fed while it runs: items arrive one by one (as the bench
 * creates or deletes VAs), at most `workers` handlers run at once, the way
 * an attacher's workers take VAs from its queue as its watch delivers them.
 */

/** FedPool takes items with push, and drain() resolves once every pushed item was handled. */
export interface FedPool<T> {
  push(item: T): void;
  /** drain says no more items come and resolves when all are handled; rejects with the first handler error. */
  drain(): Promise<void>;
}

/** createFedPool runs `handle` on pushed items, at most `workers` at once, in push order. */
export function createFedPool<T>(workers: number, handle: (item: T) => Promise<void>): FedPool<T> {
  if (!Number.isInteger(workers) || workers < 1) throw new Error(`a fed pool needs a whole number of workers >= 1, not ${workers}`);
  const waiting: T[] = [];
  let running = 0;
  let draining = false;
  let failure: { error: unknown } | undefined;
  let settle: { resolve: () => void; reject: (e: unknown) => void } | undefined;

  const finishIfDone = () => {
    if (settle === undefined || running > 0 || (waiting.length > 0 && failure === undefined)) return;
    if (failure !== undefined) settle.reject(failure.error);
    else settle.resolve();
  };
  const startNext = () => {
    while (running < workers && waiting.length > 0 && failure === undefined) {
      const item = waiting.shift() as T;
      running++;
      handle(item).then(
        () => {
          running--;
          startNext();
          finishIfDone();
        },
        (e: unknown) => {
          running--;
          failure ??= { error: e };
          finishIfDone();
        },
      );
    }
  };
  return {
    push(item) {
      if (draining) throw new Error("fed pool: push after drain");
      waiting.push(item);
      startNext();
    },
    drain() {
      draining = true;
      return new Promise<void>((resolve, reject) => {
        settle = { resolve, reject };
        finishIfDone();
      });
    },
  };
}
