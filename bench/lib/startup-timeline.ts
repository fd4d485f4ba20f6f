/**
 * The start-up timeline of one attacher's run: when, in ms from exec, each
 * step of its start-up was done, read from the klog headers of the lines
 * both attachers already write at -v=2 (no line is added for the bench).
 * The last two marks come from the bench's own watch instead.
 */
import type { AttacherKind } from "./attacher-under-test";

/** LogLine is where one mark is read from in one attacher's log. */
export interface LogLine {
  /** The line as a reader finds it in the log, for the report and bench/README.md. */
  readonly line: string;
  /** The mark is the latest of each pattern's first matching line (several: a step that ends with the last of several lines). */
  readonly patterns: readonly RegExp[];
}

/** StartupMark is one step of start-up and where each attacher tells it is done. */
export interface StartupMark {
  readonly id: string;
  readonly label: string;
  /** The two attachers' log lines, or the bench's watch (the scenario's metric of that name). */
  readonly from: { readonly ours: LogLine; readonly go: LogLine } | { readonly watchMetric: string };
}

const probing: LogLine = { line: '"Probing CSI driver for readiness"', patterns: [/^"Probing CSI driver for readiness"/] };
const driverName: LogLine = { line: '"CSI driver name"', patterns: [/^"CSI driver name"/] };
const handlerChosen: LogLine = {
  line: '"CSI driver (does not) support(s) ControllerPublishUnpublish, using ... handler"',
  patterns: [/^"CSI driver (supports|does not support) ControllerPublishUnpublish/],
};
const firstAttaching: LogLine = { line: 'first "Attaching"', patterns: [/^"Attaching"/] };
const firstAttached: LogLine = { line: 'first "Attached" (logged after ControllerPublish answers, before the status write)', patterns: [/^"Attached"/] };

function listed(kind: string): { ours: LogLine; go: LogLine } {
  return {
    ours: { line: `"Listed" kind="${kind}"`, patterns: [new RegExp(`^"Listed" kind="${kind}"`)] },
    go: { line: `client-go's "Caches populated" type="*v1.${kind}"`, patterns: [new RegExp(`^"Caches populated" type="\\*v1\\.${kind}"`)] },
  };
}

/** startupMarks are the timeline's rows, in start-up order. */
export const startupMarks: readonly StartupMark[] = [
  { id: "flagsParsed", label: "flags parsed", from: { ours: { line: '"Version" (logging starts once the flags are read)', patterns: [/^"Version"/] }, go: { line: '"Version" (main.go, right after flag.Parse)', patterns: [/^"Version"/] } } },
  {
    id: "apiClientMade",
    label: "kubeconfig loaded, API client made",
    from: {
      // Ours logs nothing of its own at this step; connectToDriver's first line follows connectToApiServer's return with nothing between.
      ours: { line: '"Probing CSI driver for readiness" (no line of its own; the next line, written as soon as the client is made)', patterns: probing.patterns },
      go: { line: 'client-go\'s first "Feature gate default state" (its feature gates read as the clientset is made from the config)', patterns: [/^"Feature gate default state"/] },
    },
  },
  { id: "probeStarted", label: "driver probe started", from: { ours: probing, go: probing } },
  { id: "driverNamed", label: "Probe and GetPluginInfo done", from: { ours: driverName, go: driverName } },
  { id: "capabilitiesKnown", label: "plugin and controller capabilities known", from: { ours: handlerChosen, go: handlerChosen } },
  { id: "listedVolumeAttachments", label: "VolumeAttachments listed", from: listed("VolumeAttachment") },
  { id: "listedPersistentVolumes", label: "PersistentVolumes listed", from: listed("PersistentVolume") },
  { id: "listedCsiNodes", label: "CSINodes listed", from: listed("CSINode") },
  {
    id: "cachesSynced",
    label: "caches synced, workers start",
    from: {
      ours: { line: '"Caches synced"', patterns: [/^"Caches synced"/] },
      go: { line: 'the later of "Caches populated" for VolumeAttachments and PersistentVolumes (what controller.Run waits for)', patterns: [...listed("VolumeAttachment").go.patterns, ...listed("PersistentVolume").go.patterns] },
    },
  },
  { id: "firstAttachStarted", label: "first attach started", from: { ours: firstAttaching, go: firstAttaching } },
  { id: "firstPublished", label: "first ControllerPublish answered", from: { ours: firstAttached, go: firstAttached } },
  { id: "firstVaAttached", label: "first VA attached (status seen by the bench)", from: { watchMetric: "firstAttachedMs" } },
  { id: "allVasAttached", label: "all VAs attached (status seen by the bench)", from: { watchMetric: "allAttachedMs" } },
];

/** A klog header: severity, MMDD, wall-clock time to the microsecond (local time), pid, file:line. */
const klogHeader = /^[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6})\s+\d+ [^\]]*\] (.*)$/;

/** TimedLine is one log line's wall-clock time (epoch ms) and its message part. */
interface TimedLine {
  readonly at: number;
  readonly message: string;
}

/** timedLines reads the klog lines of `log`; the year is the exec's (klog does not write it), lines without a header are left out. */
function timedLines(log: string, execEpochMs: number): TimedLine[] {
  const year = new Date(execEpochMs).getFullYear();
  return log.split("\n").flatMap((text) => {
    const m = klogHeader.exec(text);
    if (m === null) return [];
    const [, month, day, hours, minutes, seconds, micros, message] = m.map((part) => part ?? "");
    const at = new Date(year, Number(month) - 1, Number(day), Number(hours), Number(minutes), Number(seconds)).getTime() + Number(micros) / 1000;
    return [{ at, message: message ?? "" }];
  });
}

/**
 * startupTimeline is every log-read mark of `kind`'s run as ms from exec
 * (NaN where the line never came), plus the watch marks taken from the
 * run's `metrics`. `execEpochMs` is the wall clock at exec.
 */
export function startupTimeline(kind: Exclude<AttacherKind, "floor">, log: string, execEpochMs: number, metrics: Readonly<Record<string, number>>): Record<string, number> {
  const lines = timedLines(log, execEpochMs);
  const firstMatch = (pattern: RegExp) => lines.find((line) => pattern.test(line.message))?.at ?? Number.NaN;
  const timeline: Record<string, number> = {};
  for (const mark of startupMarks) {
    if ("watchMetric" in mark.from) {
      timeline[mark.id] = metrics[mark.from.watchMetric] ?? Number.NaN;
      continue;
    }
    const at = Math.max(...mark.from[kind].patterns.map(firstMatch));
    timeline[mark.id] = Number.isFinite(at) ? Math.round((at - execEpochMs) * 10) / 10 : Number.NaN;
  }
  return timeline;
}
