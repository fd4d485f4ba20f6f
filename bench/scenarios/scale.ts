/**
 * Scenario 9, scale: N own PVs and VAs on 100 nodes next to foreign PVs,
 * the VAs waiting (unattached) when the attacher starts. Per attacher: exec
 * to ready (its paged lists), to all attached, RSS settled and at peak, CPU,
 * one reconciler pass over N published volumes (ListVolumes pages of
 * --max-entries) with a new VA attached during it and one outside it, the
 * detach of 1% of the VAs, and a relist after 410 Gone (kube-apiserver
 * restarted over a compacted etcd). The objects are made once per N and
 * reset between attachers (ScaleObjects).
 */
import type { AttacherBinary, AttacherKind, RunningAttacher } from "../lib/attacher-under-test";
import { round3, settleRss, type AttacherLimits, type BenchContext } from "../lib/bench-context";
import { fakeDriverOf, setDriverLatency } from "../lib/bench-ground";
import { progress } from "../lib/progress";
import type { MetricSpec, RunResult } from "../lib/results";
import { scaleProbePrefix, scaleVaName, type ScaleObjects } from "../lib/scale-objects";
import { paths } from "../../test/ground/objects";
import type { FakeCsiDriver } from "../../test/ground/fake-csi-driver/launch";

export interface ScaleParams extends AttacherLimits {
  /** The N of each step, smallest first; the run stops at the first N that fails. */
  readonly sizes: readonly number[];
  /** Foreign PVs (another driver's) present at every N. */
  readonly foreignPvs: number;
  /** Nodes the VAs are spread over. */
  readonly nodes: number;
  /** --max-entries: ListVolumes page size. */
  readonly maxEntries: number;
  /** --reconcile-sync in seconds: a pass comes at most this long after the attaches settle. */
  readonly reconcileSeconds: number;
}

/** The call log the fault driver keeps during a scale run: 100,000 attaches would otherwise all stay in its memory. */
const callLogLimit = 5_000;
/** The scale run's driver: ListVolumes with published nodes, so both attachers run their reconciler. */
const listingCapabilities = ["PUBLISH_UNPUBLISH_VOLUME", "LIST_VOLUMES", "LIST_VOLUMES_PUBLISHED_NODES"] as const;

export const scaleMetrics: readonly MetricSpec[] = [
  { name: "readyMs", unit: "ms", better: "lower", description: "exec to ready (the initial paged lists of VAs, PVs and CSINodes)" },
  { name: "allAttachedMs", unit: "ms", better: "lower", description: "exec to the last of the N waiting VAs attached" },
  { name: "attachCpuS", unit: "CPU s", better: "lower", description: "user+sys CPU from exec to all attached" },
  { name: "rssSettledMiB", unit: "MiB", better: "lower", description: "median VmRSS over the last second of 3 s after all attached" },
  { name: "anonSettledMiB", unit: "MiB", better: "lower", description: "RssAnon (private RSS) at the same moment" },
  { name: "hwmAttachMiB", unit: "MiB", better: "lower", description: "VmHWM (peak RSS) once all are attached" },
  { name: "passMs", unit: "ms", better: "lower", description: "one reconciler pass after all attached: the driver's first ListVolumes page started to its last answered" },
  { name: "passPages", unit: "pages", better: "lower", description: "ListVolumes calls in that pass" },
  { name: "passCpuS", unit: "CPU s", better: "lower", description: "CPU from the pass's first page seen to 1.5 s after its last (one probe attach included)" },
  { name: "passAttachMs", unit: "ms", better: "lower", description: "a new VA created as the pass starts: create to attached" },
  { name: "idleAttachMs", unit: "ms", better: "lower", description: "a new VA created outside any pass: create to attached" },
  { name: "relistMs", unit: "ms", better: "lower", description: "kube-apiserver restarted over a compacted etcd, so every watch gets 410 Gone: its process started to the attacher's VA and PV lists done (its log: ours \"Listed\", Go \"Caches populated\"); the server's own start-up and the attacher's reconnect back-off included" },
  { name: "backToWorkMs", unit: "ms", better: "lower", description: "kube-apiserver ready (/readyz) to a VA created then attached" },
  { name: "relistCpuS", unit: "CPU s", better: "lower", description: "CPU from the restart to that VA attached" },
  { name: "relistPeakRssMiB", unit: "MiB", better: "lower", description: "highest VmRSS sample (every 200 ms) during the relist" },
  { name: "detachMs", unit: "ms", better: "lower", description: "1% of the VAs deleted at once: first delete to last gone" },
  { name: "hwmMiB", unit: "MiB", better: "lower", description: "VmHWM at the end of the run" },
  { name: "cpuTotalS", unit: "CPU s", better: "lower", description: "user+sys CPU of the whole run" },
];

/** prepareScaleDriver gives the fault driver ListVolumes with published nodes and a bounded call log, with no publications. */
export async function prepareScaleDriver(driver: FakeCsiDriver, driverLatencyMs: number): Promise<void> {
  await driver.control.reset();
  await driver.control.configure({ controllerCapabilities: [...listingCapabilities], callLogLimit });
  await setDriverLatency(driver, driverLatencyMs);
}

/** restoreDriver undoes prepareScaleDriver for the scenarios that run after: no listing, every call logged. */
export async function restoreDriver(driver: FakeCsiDriver, driverLatencyMs: number): Promise<void> {
  await driver.control.reset();
  await setDriverLatency(driver, driverLatencyMs);
}

/** runScale runs one attacher through every measure at `n` VAs; the objects exist and were reset. */
export async function runScale(ctx: BenchContext, objects: ScaleObjects, binary: AttacherBinary, round: number, n: number, params: ScaleParams, driverLatencyMs: number): Promise<RunResult> {
  const label = `scale-${n}-r${round}`;
  const driver = fakeDriverOf(ctx.ground, "scale");
  const resetSeconds = await objects.reset(n);
  await prepareScaleDriver(driver, driverLatencyMs);
  progress(`${label} ${binary.kind}: objects reset in ${resetSeconds.toFixed(1)} s`, true);
  const names = Array.from({ length: n }, (_, i) => scaleVaName(i));
  ctx.watch.forget();
  const attacher = ctx.start(binary, label, params, { extraArgs: [`--reconcile-sync=${params.reconcileSeconds}s`, `--max-entries=${params.maxEntries}`] });
  try {
    const readyMs = await attacher.waitReady(600_000);
    const status = () => `${label} ${binary.kind}: attached ${ctx.watch.countAttached(names)}/${n}`;
    await ctx.waitFor(`${label}: all attached`, () => ctx.watch.countAttached(names) === n, status, 120_000 + n * 50, [attacher.process]);
    const attachCpuS = attacher.cpuSeconds();
    const allAttachedMs = Math.max(...names.map((name) => ctx.watch.attachedAt.get(name) ?? 0)) - attacher.execAt;
    const hwmAttachMiB = mib(attacher.hwmBytes());
    const rssSettledMiB = await settleRss(attacher, 3_000);
    const anonSettledMiB = mib(attacher.anonBytes());

    const pass = await measurePass(ctx, objects, attacher, driver, n, params, label);
    const idleAttachMs = await probeAttach(ctx, objects, attacher, `${scaleProbePrefix}idle-${binary.kind}-${n}`, n + 1);
    // Before the relist: a relist re-queues every VA (as client-go's does
    // for upstream), and the detaches would compete with that wave.
    progress(`${label} ${binary.kind}: detaching 1%`, true);
    const detachNames = names.slice(0, Math.max(1, Math.round(n / 100)));
    const detachMs = await ctx.cleanUp(detachNames, attacher, `${label} ${binary.kind}`, 120_000 + n * 20);
    const relist = await measureRelist(ctx, objects, attacher, n, label, binary.kind);
    return {
      kind: binary.kind,
      round,
      metrics: {
        readyMs: Math.round(readyMs),
        allAttachedMs: Math.round(allAttachedMs),
        attachCpuS: round3(attachCpuS),
        rssSettledMiB,
        anonSettledMiB,
        hwmAttachMiB,
        ...pass,
        idleAttachMs: Math.round(idleAttachMs),
        ...relist,
        detachMs: Math.round(detachMs),
        hwmMiB: mib(attacher.hwmBytes()),
        cpuTotalS: round3(attacher.cpuSeconds()),
      },
    };
  } finally {
    await attacher.stop();
  }
}

/**
 * measurePass waits for the next reconciler pass (the driver's call log is
 * cleared first, so the first ListVolumes seen opens it), creates a VA as
 * it starts, and ends when ListVolumes calls stop for 1.5 s.
 */
async function measurePass(ctx: BenchContext, objects: ScaleObjects, attacher: RunningAttacher, driver: FakeCsiDriver, n: number, params: ScaleParams, label: string) {
  await driver.control.clearCalls();
  const deadline = performance.now() + params.reconcileSeconds * 1000 + 120_000;
  let calls = await driver.control.calls("ListVolumes");
  while (calls.length === 0) {
    if (!attacher.process.running) throw new Error(`${attacher.binary.kind} attacher exited while waiting for a reconciler pass`);
    if (performance.now() > deadline) throw new Error(`${label}: no reconciler pass within ${params.reconcileSeconds} s + 120 s`);
    progress(`${label} ${attacher.binary.kind}: waiting for a reconciler pass`);
    await Bun.sleep(100);
    calls = await driver.control.calls("ListVolumes");
  }
  const cpuAtStart = attacher.cpuSeconds();
  const probe = probeAttach(ctx, objects, attacher, `${scaleProbePrefix}pass-${attacher.binary.kind}-${n}`, n);
  const quietMs = 1_500;
  for (;;) {
    await Bun.sleep(200);
    calls = await driver.control.calls("ListVolumes");
    const last = calls[calls.length - 1];
    if (last?.finishedAt != null && Date.now() - Date.parse(last.finishedAt) >= quietMs) break;
    if (performance.now() > deadline) throw new Error(`${label}: reconciler pass did not end`);
    progress(`${label} ${attacher.binary.kind}: reconciler pass, ${calls.length} pages so far`);
  }
  const passCpuS = attacher.cpuSeconds() - cpuAtStart;
  const passAttachMs = await probe;
  const first = calls[0];
  const last = calls[calls.length - 1];
  const passMs = first !== undefined && last?.finishedAt != null ? Date.parse(last.finishedAt) - Date.parse(first.startedAt) : Number.NaN;
  return { passMs, passPages: calls.length, passCpuS: round3(passCpuS), passAttachMs: Math.round(passAttachMs) };
}

/** probeAttach creates one VA for PV `pvIndex` and resolves with ms from its create to attached. */
async function probeAttach(ctx: BenchContext, objects: ScaleObjects, attacher: RunningAttacher, name: string, pvIndex: number): Promise<number> {
  const created = performance.now();
  await ctx.ground.admin.create(paths.volumeAttachments, objects.volumeAttachment(pvIndex, name));
  await ctx.waitFor(`${name} attached`, () => ctx.watch.attachedAt.has(name), () => `${name}: waiting for attach`, 300_000, [attacher.process]);
  return (ctx.watch.attachedAt.get(name) ?? Number.NaN) - created;
}

/**
 * measureRelist restarts kube-apiserver over a compacted etcd: every watch
 * of the attacher resumes into 410 Gone and must list again. A VA created
 * once the server is back is attached only after the attacher's new watch
 * sees it.
 */
async function measureRelist(ctx: BenchContext, objects: ScaleObjects, attacher: RunningAttacher, n: number, label: string, kind: AttacherKind) {
  // The floor client logs no list lines; the scale scenario runs ours and Go only.
  if (kind === "floor") throw new Error("the scale scenario measures a relist of ours or Go, not the floor client");
  progress(`${label} ${kind}: restarting kube-apiserver over a compacted etcd`, true);
  const cpuBefore = attacher.cpuSeconds();
  const samplesFrom = attacher.rss.length;
  const logFrom = attacher.logBytes();
  let spawnedAt = 0;
  await ctx.ground.cluster.restartApiserver(async () => {
    await ctx.ground.cluster.compactEtcd();
    // restartApiserver starts the new process right after this returns.
    spawnedAt = Date.now();
  });
  const up = performance.now();
  const name = `${scaleProbePrefix}relist-${kind}-${n}`;
  await ctx.ground.admin.create(paths.volumeAttachments, objects.volumeAttachment(n + 2, name));
  await ctx.waitFor(`${name} attached`, () => ctx.watch.attachedAt.has(name), () => `${label} ${kind}: relisting`, 600_000, [attacher.process]);
  const backToWorkMs = (ctx.watch.attachedAt.get(name) ?? Number.NaN) - up;
  // Read every half second: at 100,000 VAs the log is tens of MB.
  let listedAt = relistDoneAt(await attacher.logSince(logFrom), kind, spawnedAt);
  const deadline = performance.now() + 300_000;
  while (!Number.isFinite(listedAt)) {
    if (!attacher.process.running || performance.now() > deadline) throw new Error(`${label}: ${kind} attacher logged no relist of VAs and PVs`);
    progress(`${label} ${kind}: waiting for the relist in the log`);
    await Bun.sleep(500);
    listedAt = relistDoneAt(await attacher.logSince(logFrom), kind, spawnedAt);
  }
  attacher.sample();
  const peak = Math.max(0, ...attacher.rss.slice(samplesFrom).map((s) => s.rssBytes));
  return { relistMs: Math.round(listedAt - spawnedAt), backToWorkMs: Math.round(backToWorkMs), relistCpuS: round3(attacher.cpuSeconds() - cpuBefore), relistPeakRssMiB: mib(peak) };
}

/** The log line each attacher writes at -v=2 when a list of `kind` is in its cache. */
const listedLine: Record<Exclude<AttacherKind, "floor">, (kind: "VolumeAttachment" | "PersistentVolume") => string> = {
  ours: (kind) => `"Listed" kind="${kind}"`,
  go: (kind) => `"Caches populated" type="*v1.${kind}"`,
};

/**
 * relistDoneAt is the wall-clock ms of the later of the attacher's first
 * VA and PV list lines logged at or after `sinceMs`, or NaN while either is
 * missing. klog stamps lines with local time to the microsecond.
 */
export function relistDoneAt(log: string, kind: Exclude<AttacherKind, "floor">, sinceMs: number): number {
  const lines = log.split("\n");
  const at = (resource: "VolumeAttachment" | "PersistentVolume") => {
    const marker = listedLine[kind](resource);
    for (const line of lines) {
      if (!line.includes(marker)) continue;
      const t = klogTime(line, new Date(sinceMs).getFullYear());
      if (t >= sinceMs) return t;
    }
    return Number.NaN;
  };
  return Math.max(at("VolumeAttachment"), at("PersistentVolume"));
}

/** klogTime reads the local time of a klog header ("I1123 18:15:24.683039 ..."), in ms since the epoch; NaN if there is none. */
export function klogTime(line: string, year: number): number {
  const match = /^[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6})/.exec(line);
  if (match === null) return Number.NaN;
  const [, month, day, hours, minutes, seconds, micros] = match.map(Number);
  return new Date(year, (month ?? 1) - 1, day, hours, minutes, seconds, (micros ?? 0) / 1000).getTime();
}

function mib(bytes: number): number {
  return round3(bytes / 1048576);
}
