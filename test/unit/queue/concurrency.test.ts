import { describe, expect, it } from "bun:test";
import { WorkQueue } from "../../../src/queue/work-queue";
import { FakeClock } from "./fake-clock";
import { settle } from "./settle";
import { seededRandom } from "../../ground/seeded-random";


/** Yields to other async work `turns` times (microtasks only, no timers). */
async function yieldTurns(turns: number): Promise<void> {
  for (let i = 0; i < turns; i++) await Promise.resolve();
}

interface Run {
  /** Items a worker held while another worker also held them. */
  overlaps: string[];
  /** Items never processed after their last add. */
  missed: string[];
  processed: number;
  /** Adds the queue made itself when an addAfter delay ended. */
  delayedLandings: number;
}

async function runWorkers(options: { seed: number; workers: number; items: number; adds: number; delayed: boolean }): Promise<Run> {
  const random = seededRandom(options.seed);
  const clock = new FakeClock();
  // A logical time: every add and every processing start gets the next tick.
  let tick = 0;
  const lastAdd = new Map<string, number>();
  let adds = 0;
  let directAdds = 0;
  // Records every add, including those the queue makes itself when an
  // addAfter delay ends, so "after its last add" covers delayed adds too.
  class RecordingQueue extends WorkQueue {
    override add(item: string): void {
      lastAdd.set(item, tick++);
      adds++;
      super.add(item);
    }
  }
  const queue = new RecordingQueue({ name: "concurrency", clock });
  const lastStart = new Map<string, number>();
  const active = new Set<string>();
  const overlaps: string[] = [];
  let processed = 0;

  const worker = async (): Promise<void> => {
    for (;;) {
      const result = await queue.get();
      if (result.shutdown) return;
      const { item } = result;
      if (active.has(item)) overlaps.push(item);
      active.add(item);
      lastStart.set(item, tick++);
      processed++;
      try {
        await yieldTurns(Math.floor(random() * 20));
      } finally {
        active.delete(item);
        queue.done(item);
      }
    }
  };

  const producer = async (): Promise<void> => {
    for (let i = 0; i < options.adds; i++) {
      const item = `va-${Math.floor(random() * options.items)}`;
      if (options.delayed && random() < 0.3) {
        // The clock steps below make every delayed add land before the end.
        queue.addAfter(item, 1 + Math.floor(random() * 50));
      } else {
        directAdds++;
        queue.add(item);
      }
      if (options.delayed) clock.step(Math.floor(random() * 10));
      await yieldTurns(Math.floor(random() * 5));
    }
  };

  const workers = Array.from({ length: options.workers }, () => worker());
  await producer();
  clock.step(1000);
  // Wait on the condition "nothing left to do", bounded so a bug fails fast.
  for (let turn = 0; turn < 10_000 && (queue.len() > 0 || active.size > 0); turn++) await settle();
  queue.shutDown();
  await Promise.all(workers);

  const missed = [...lastAdd].filter(([item, added]) => (lastStart.get(item) ?? -1) < added).map(([item]) => item);
  return { overlaps, missed, processed, delayedLandings: adds - directAdds };
}

describe("WorkQueue under concurrent workers", () => {
  for (const seed of [1, 2, 3]) {
    it(`never processes an item concurrently and processes every item after its last add (seed ${seed})`, async () => {
      const run = await runWorkers({ seed, workers: 8, items: 20, adds: 2000, delayed: false });
      expect({ overlaps: run.overlaps, missed: run.missed }).toEqual({ overlaps: [], missed: [] });
      expect(run.processed).toBeGreaterThanOrEqual(20);
    });
  }

  it("keeps both guarantees when delayed adds land while workers run", async () => {
    const run = await runWorkers({ seed: 42, workers: 5, items: 10, adds: 2000, delayed: true });
    expect({ overlaps: run.overlaps, missed: run.missed }).toEqual({ overlaps: [], missed: [] });
    expect(run.delayedLandings).toBeGreaterThan(0);
  });
});
