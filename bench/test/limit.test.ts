import { describe, expect, it } from "bun:test";
import { attachWrites, detachWrites, nodeIdAnnotation } from "../lib/bare-client-writes";
import { benchDriverName, pvFinalizer } from "../lib/bench-ground";
import { createFedPool } from "../lib/fed-pool";
import { summarizeLimit } from "../lib/limit-ratios";
import type { ScenarioResult } from "../lib/results";
import { nodeIdAnnotation as attacherNodeIdAnnotation } from "../../src/controller/annotations";
import { finalizerName } from "../../src/controller/driver-names";
import { addFinalizerPatch, removeFinalizerPatch } from "../../src/kube/finalizer-patches";
import { createMergePatch } from "../../src/kube/merge-patch";

const va = { name: "va-1", pvName: "pv-1", nodeId: "node-1-id", attachmentMetadata: { devicePath: "/dev/fake/vol-1" } };

describe("the bare client's writes", () => {
  it("are the attacher's three attach writes for a fresh VA whose PV holds only pv-protection", () => {
    expect([pvFinalizer, nodeIdAnnotation]).toEqual([finalizerName(benchDriverName), attacherNodeIdAnnotation]);
    expect(attachWrites(va, pvFinalizer)).toEqual([
      { path: "/api/v1/persistentvolumes/pv-1", type: "json", body: addFinalizerPatch(["kubernetes.io/pv-protection"], pvFinalizer) },
      {
        path: "/apis/storage.k8s.io/v1/volumeattachments/va-1",
        type: "merge",
        body: createMergePatch({ metadata: {} }, { metadata: { finalizers: [pvFinalizer], annotations: { [attacherNodeIdAnnotation]: "node-1-id" } } }),
      },
      {
        path: "/apis/storage.k8s.io/v1/volumeattachments/va-1/status",
        type: "merge",
        body: createMergePatch({ status: {} }, { status: { attached: true, attachmentMetadata: { devicePath: "/dev/fake/vol-1" } } }),
      },
    ]);
  });

  it("detach with the one finalizer removal an attacher sends when the VA holds only its finalizer", () => {
    expect(detachWrites("va-1")).toEqual([{ path: "/apis/storage.k8s.io/v1/volumeattachments/va-1", type: "merge", body: { metadata: { finalizers: null } } }]);
    // The PV keeps its finalizer on detach, as the attacher's: no PV write.
    expect(removeFinalizerPatch(["kubernetes.io/pv-protection"], pvFinalizer)).toBeUndefined();
  });
});

describe("fed pool", () => {
  it("handles every pushed item, never more than `workers` at once, and drains after the last", async () => {
    let running = 0;
    let peak = 0;
    const handled: number[] = [];
    const pool = createFedPool<number>(3, async (item) => {
      running++;
      peak = Math.max(peak, running);
      await Bun.sleep(item % 2);
      handled.push(item);
      running--;
    });
    for (let i = 0; i < 10; i++) {
      pool.push(i);
      if (i === 4) await Bun.sleep(2);
    }
    await pool.drain();
    expect({ peak, handled: [...handled].sort((a, b) => a - b), running }).toEqual({ peak: 3, handled: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], running: 0 });
  });

  it("drains at once when nothing was pushed, and rejects with a handler's error", async () => {
    await createFedPool<number>(2, () => Promise.resolve()).drain();
    const pool = createFedPool<number>(2, (item) => (item === 1 ? Promise.reject(new Error("write 1 failed")) : Promise.resolve()));
    pool.push(0);
    pool.push(1);
    pool.push(2);
    await expect(pool.drain()).rejects.toThrow("write 1 failed");
  });

  it("refuses a worker count below one and a push after drain", async () => {
    expect(() => createFedPool<number>(0, () => Promise.resolve())).toThrow("a fed pool needs a whole number of workers >= 1, not 0");
    const pool = createFedPool<number>(1, () => Promise.resolve());
    await pool.drain();
    expect(() => pool.push(1)).toThrow("fed pool: push after drain");
  });
});

describe("limit ratios", () => {
  const scenario = (limitRuns: ScenarioResult["limitRuns"]): ScenarioResult => ({
    id: "t",
    title: "t",
    params: {},
    notes: [],
    metrics: [{ name: "attachPerSecond", unit: "VA/s", better: "higher", description: "" }],
    runs: [
      { kind: "ours", round: 1, metrics: { attachPerSecond: 90 } },
      { kind: "go", round: 1, metrics: { attachPerSecond: 30 } },
      { kind: "ours", round: 2, metrics: { attachPerSecond: 50 } },
      { kind: "go", round: 2, metrics: { attachPerSecond: 40 } },
      { kind: "ours", round: 3, metrics: { attachPerSecond: 70 } },
    ],
    ...(limitRuns === undefined ? {} : { limitRuns }),
  });

  it("divides each round's attacher rate by that round's limit and takes the medians, skipping rounds a side lacks", () => {
    const summary = summarizeLimit(
      scenario([
        { round: 1, metrics: { attachPerSecond: 100 } },
        { round: 2, metrics: { attachPerSecond: 200 } },
        { round: 3, metrics: { attachPerSecond: 140 } },
      ]),
    );
    // ours: 0.9, 0.25, 0.5 -> 0.5; go: 0.3, 0.2 -> 0.25; limit: 100, 200, 140 -> 140
    expect(summary).toEqual({ limit: 140, oursOverLimit: 0.5, goOverLimit: 0.25 });
  });

  it("has nothing to say about a scenario the bare client did not run next to", () => {
    expect([summarizeLimit(scenario(undefined)), summarizeLimit(scenario([]))]).toEqual([undefined, undefined]);
  });
});
