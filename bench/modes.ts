/**
 * The three sizes of the benchmark. `full` is what the committed report
 * shows; `quick` fits in about three minutes; `smoke` only proves the
 * harness works end to end for both attachers (CI), and its numbers mean
 * nothing.
 */
import type { AttacherLimits } from "./lib/bench-context";
import type { ColdStartParams } from "./scenarios/cold-start";
import type { ContainerLimitParams } from "./scenarios/container-limit";
import type { FairnessParams } from "./scenarios/fairness";
import type { LatencyParams } from "./scenarios/latency";
import type { MemoryParams } from "./scenarios/memory";
import type { PodsParams } from "./scenarios/pods";
import type { ScaleParams } from "./scenarios/scale";
import type { ThroughputParams } from "./scenarios/throughput";

export type ModeName = "full" | "quick" | "smoke";

/** upstream's defaults, which throttle everything */
const defaultLimits = { qps: 5, burst: 10 } as const;
/** limits high enough that the API client is not the bottleneck */
const highLimits = { qps: 1000, burst: 2000 } as const;
/** kube-controller-manager's own limits in the pods scenario: high too, so the attachers differ and not its throttle */
const controllerLimits = { controllerQps: 1000, controllerBurst: 2000 } as const;

/** Mode lists the scenarios of one size; an absent scenario is skipped. */
export interface Mode {
  readonly rounds: number;
  readonly idle: AttacherLimits;
  readonly throughput: readonly ThroughputParams[];
  readonly coldStart?: ColdStartParams;
  readonly memory?: MemoryParams;
  readonly latency?: LatencyParams;
  readonly fairness?: FairnessParams;
  readonly scale?: ScaleParams;
  /** One cell per N: the smallest memory limit that holds N VAs. */
  readonly containerLimit?: readonly ContainerLimitParams[];
  /** Ours, Go and the bare floor client: idle memory, then one cycle of N VAs; one cell per worker count. */
  readonly floor?: readonly ThroughputParams[];
  readonly pods?: PodsParams;
  /** A Prometheus scrapes both attachers through the throughput scenario; the report draws the dashboard's main panels over it. */
  readonly dashboardPanels?: boolean;
}

/**
 * The scale scenario's shape (issue 16): 100 nodes, 10,000 foreign PVs,
 * ListVolumes pages of 500, a pass every 30 s, upstream's 10 workers at
 * limits high enough that the client throttle is not what is measured.
 * One round per N: a 10,000-VA run takes minutes per attacher.
 */
export const defaultScale: ScaleParams = { sizes: [1000, 10_000, 50_000], foreignPvs: 10_000, nodes: 100, maxEntries: 500, reconcileSeconds: 30, workers: 10, ...highLimits };

/**
 * One cell of the container-limit scenario at the full mode's shape: N VAs,
 * upstream's 10 workers, limits high enough not to throttle, 8 MiB steps
 * unless `stepMiB` says otherwise. --container-limit-n picks its N in any
 * mode, --container-limit-step the step.
 */
export function containerLimitCell(volumes: number, stepMiB = 8): ContainerLimitParams {
  return { volumes, workers: 10, stepMiB, ...highLimits };
}

/**
 * The cold-start cell at the full mode's shape: N VAs waiting at exec,
 * upstream's 10 workers, limits high enough not to throttle.
 * --cold-start-waiting picks its N in any mode (issue 25's CPU of 300 VAs
 * attached and detached, start-up included).
 */
export function coldStartCell(waiting: number): ColdStartParams {
  return { waiting, workers: 10, ...highLimits };
}

export const modes: Record<ModeName, Mode> = {
  full: {
    rounds: 3,
    idle: { workers: 10, ...highLimits },
    throughput: [
      { volumes: 1000, workers: 10, ...highLimits },
      { volumes: 1000, workers: 100, ...highLimits },
      // ~3 writes per attach and 2 per detach at 5 writes/s: ~50 s a run.
      { volumes: 50, workers: 10, ...defaultLimits },
      { volumes: 50, workers: 100, ...defaultLimits },
    ],
    coldStart: coldStartCell(100),
    memory: { foreignPvs: 10_000, ownVas: 1000, workers: 100, ...highLimits },
    latency: { perSecond: 20, seconds: 30, workers: 10, ...highLimits },
    fairness: { backlog: 200, slowMs: 2000, workers: 10, ...highLimits },
    scale: defaultScale,
    // 30: an edge or k3s cluster's size (issue 24); 300 and 1,000 beyond it.
    containerLimit: [containerLimitCell(30), containerLimitCell(300), containerLimitCell(1000)],
    // Both worker counts of the throughput cells: issue 36 holds ours/floor to a bound at each.
    floor: [
      { volumes: 1000, workers: 10, ...highLimits },
      { volumes: 1000, workers: 100, ...highLimits },
    ],
    pods: { pods: 200, workers: 10, ...highLimits, ...controllerLimits },
    dashboardPanels: true,
  },
  quick: {
    rounds: 2,
    idle: { workers: 10, ...highLimits },
    throughput: [
      { volumes: 200, workers: 10, ...highLimits },
      { volumes: 200, workers: 100, ...highLimits },
    ],
    coldStart: { waiting: 100, workers: 10, ...highLimits },
    memory: { foreignPvs: 2000, ownVas: 200, workers: 100, ...highLimits },
    // No fairness run: it would push quick past three minutes on a busy machine.
    latency: { perSecond: 20, seconds: 5, workers: 10, ...highLimits },
    containerLimit: [{ volumes: 100, workers: 10, stepMiB: 16, ...highLimits }],
    floor: [{ volumes: 200, workers: 10, ...highLimits }],
    pods: { pods: 50, workers: 10, ...highLimits, ...controllerLimits },
    dashboardPanels: true,
  },
  smoke: {
    rounds: 1,
    idle: { workers: 10, ...highLimits },
    throughput: [{ volumes: 10, workers: 10, ...highLimits }],
    coldStart: { waiting: 5, workers: 10, ...highLimits },
    memory: { foreignPvs: 20, ownVas: 10, workers: 10, ...highLimits },
    latency: { perSecond: 10, seconds: 1, workers: 10, ...highLimits },
    fairness: { backlog: 4, slowMs: 200, workers: 2, ...highLimits },
    containerLimit: [{ volumes: 10, workers: 10, stepMiB: 32, ...highLimits }],
    floor: [{ volumes: 10, workers: 10, ...highLimits }],
    pods: { pods: 4, workers: 10, ...highLimits, ...controllerLimits },
    // No Prometheus: its start and the panels' queries would add seconds to CI's run.
  },
};
