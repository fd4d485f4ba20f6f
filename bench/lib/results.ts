/** The shape of a benchmark's results, as written to bench/results/<date>.json. */
import type { AttacherKind } from "./attacher-under-test";
import type { LimitTrial } from "./limit-walk";

/** MetricSpec describes one number a scenario reports. */
export interface MetricSpec {
  readonly name: string;
  readonly unit: string;
  /** Which direction is better, so the report can say who won. */
  readonly better: "lower" | "higher";
  readonly description: string;
}

/** Series are [t seconds, value] points for the report's curves. */
export type Series = readonly (readonly [number, number])[];

/** RunResult is one attacher's run of one scenario in one round. */
export interface RunResult {
  readonly kind: AttacherKind;
  readonly round: number;
  readonly metrics: Readonly<Record<string, number>>;
  /** Attached VAs over time since the VAs were created. */
  readonly attachedCurve?: Series;
  /** VmRSS in MiB over time since exec. */
  readonly rssCurve?: Series;
  /** Sorted latencies in ms, for a CDF. */
  readonly latenciesMs?: readonly number[];
  /** The limits a container-limit run tried, in order. */
  readonly limitTrials?: readonly LimitTrialRecord[];
  /** Ms from exec to each step of start-up (bench/lib/startup-timeline.ts's marks), in the cold-start scenario. */
  readonly startupTimeline?: Readonly<Record<string, number>>;
  /** What a reader needs beside the numbers (e.g. how a run failed under a limit); the report lists them with the scenario's notes. */
  readonly notes?: readonly string[];
}

/** LimitTrialRecord is a LimitTrial of the container-limit walk as the report keeps it: the limit in MiB, the seconds rounded to ms. */
export type LimitTrialRecord = Omit<LimitTrial, "limitBytes"> & { readonly limitMiB: number };

/** LimitRun is one round of the bare client (scenario 7) next to a throughput cell. */
export interface LimitRun {
  readonly round: number;
  /** attachPerSecond, attachSeconds, detachSeconds, measured as the throughput scenario measures an attacher. */
  readonly metrics: Readonly<Record<string, number>>;
}

/** ScenarioResult is every run of one scenario with one set of parameters. */
export interface ScenarioResult {
  readonly id: string;
  readonly title: string;
  readonly params: Readonly<Record<string, number | string>>;
  readonly metrics: readonly MetricSpec[];
  readonly runs: readonly RunResult[];
  /** Caveats a reader must know, e.g. a flag one side ignores. */
  readonly notes: readonly string[];
  /** The bare client's rounds, on a throughput cell it ran next to. */
  readonly limitRuns?: readonly LimitRun[];
}

/** A dashboard panel drawn from a real Prometheus's answers over a scenario. */
export interface PanelPictureRecord {
  readonly title: string;
  /** Where the report writes the SVG, relative to the report's directory. */
  readonly file: string;
  readonly svg: string;
}

/** MonitoringPictures are the dashboard's main panels over one scenario (bench/lib/bench-monitoring.ts). */
export interface MonitoringPictures {
  /** The scenario's id prefix, e.g. "throughput". */
  readonly scenario: string;
  /** How the series were scraped and queried. */
  readonly description: string;
  readonly panels: readonly PanelPictureRecord[];
  /** Panels whose queries returned no number over the scenario. */
  readonly empty: readonly string[];
}

/** MachineFacts describe where the numbers came from. */
export interface MachineFacts {
  readonly date: string;
  readonly hostname: string;
  readonly cpuModel: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly kernel: string;
  readonly bunVersion: string;
  readonly goAttacher: string;
  readonly oursBinary: string;
  readonly oursCommit: string;
  readonly kubeApiserver: string;
  readonly oursHonoursQps: boolean;
  readonly driverLatencyMs: number;
  /** The CSI driver of the ground; absent in reports from before --driver (always the fault driver then). */
  readonly driver?: "fake" | "mock";
  readonly mode: string;
  readonly rounds: number;
  readonly wallSeconds: number;
}

/** BenchResults is the whole file. */
export interface BenchResults {
  readonly machine: MachineFacts;
  readonly scenarios: readonly ScenarioResult[];
  /** The dashboard over the throughput scenario, where the mode draws it. */
  readonly monitoring?: MonitoringPictures;
}
