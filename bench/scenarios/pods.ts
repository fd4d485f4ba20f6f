/**
 * Scenario 8, pods: the attacher under its real client. kube-controller-
 * manager's attach/detach controller turns N Pods (created at once, each
 * with its own bound claim, spread over the nodes) into VolumeAttachments;
 * measured is the time until every volume is listed in its Node's
 * `status.volumesAttached` (what a kubelet waits for before mounting), and
 * after the Pods are deleted, until none is. The controller polls a VA's
 * status from 0.5 s on (x1.05 a poll), so its own pace is part of both
 * numbers; the VA-attached time beside them is the attacher's part alone.
 */
import type { AdminClient } from "../../test/ground/admin-client";
import type { KubeControllerManager } from "../../test/ground/kube-controller-manager";
import { waitForCondition } from "../../test/ground/managed-process";
import { attachedVolumeName, attachmentName, attachRequiredCsiDriver, claimFor, controllerManagedNode, podOnNode, podPaths } from "../../test/ground/pod-objects";
import { paths, persistentVolume } from "../../test/ground/objects";
import type { AttacherBinary } from "../lib/attacher-under-test";
import { round3, type AttacherLimits, type BenchContext } from "../lib/bench-context";
import { benchDriverName, benchNodes, bulkConcurrency, forEachLimited, prepareOwnPvs, vaNode } from "../lib/bench-ground";
import { attachmentKey, NodeVolumesLog } from "../lib/node-volumes-log";
import { progress } from "../lib/progress";
import { percentile } from "../lib/stats";
import type { MetricSpec, RunResult } from "../lib/results";

export interface PodsParams extends AttacherLimits {
  readonly pods: number;
  /** kube-controller-manager's own --kube-api-qps/burst: high, so that its client throttle is not what is measured. */
  readonly controllerQps: number;
  readonly controllerBurst: number;
}

export const podsMetrics: readonly MetricSpec[] = [
  { name: "attachSeconds", unit: "s", better: "lower", description: "first Pod created to the last volume in node.status.volumesAttached" },
  { name: "vaAttachedSeconds", unit: "s", better: "lower", description: "first Pod created to the last of the controller's VAs attached (the attacher's part)" },
  { name: "vaP50Ms", unit: "ms", better: "lower", description: "median time from the controller's creation of a VA to its attached status (the attacher alone)" },
  { name: "vaP90Ms", unit: "ms", better: "lower", description: "90th percentile of the same" },
  { name: "detachSeconds", unit: "s", better: "lower", description: "first Pod deleted to the last volume gone from node.status.volumesAttached" },
  { name: "cpuSecondsPer1000", unit: "CPU s", better: "lower", description: "attacher user+sys CPU per 1,000 Pods attached and detached" },
  { name: "peakRssMiB", unit: "MiB", better: "lower", description: "VmHWM at the end of the run" },
];

const namespace = "default";
const claimName = (i: number) => `bench-claim-${String(i).padStart(6, "0")}`;
const podPvName = (i: number) => `bench-pod-pv-${String(i).padStart(6, "0")}`;
const podVolumeHandle = (i: number) => `pod-vol-${i}`;

/** One Pod's volume, as the controller and the Node name it. */
interface PodVolume {
  readonly node: string;
  readonly vaName: string;
  /** attachmentKey of the volume on its node, for the NodeVolumesLog. */
  readonly key: string;
}

function podVolume(i: number): PodVolume {
  const node = vaNode(i);
  return { node, vaName: attachmentName(podVolumeHandle(i), benchDriverName, node), key: attachmentKey(node, attachedVolumeName(benchDriverName, podVolumeHandle(i))) };
}

/**
 * createControllerManagedNodes makes what the controller must see before it
 * starts: the bench's Nodes, annotated as controller-managed (a Pod seen
 * before its Node waits for a 3-minute re-scan), and the CSIDriver saying
 * the bench driver's volumes need attaching.
 */
export async function createControllerManagedNodes(admin: AdminClient): Promise<void> {
  for (const node of benchNodes) await admin.create(podPaths.nodes, controllerManagedNode(node));
  await admin.create(podPaths.csiDrivers, attachRequiredCsiDriver(benchDriverName));
}

/**
 * createBoundClaims creates `count` PVs and claims naming them, and waits
 * until the controller manager's PV binder has bound every one (so call it
 * once the controller manager runs).
 */
export async function createBoundClaims(admin: AdminClient, count: number): Promise<void> {
  const indexes = Array.from({ length: count }, (_, i) => i);
  // Every PV Available before any claim: a bind that races the binder's own
  // phase write to the PV loses on a conflict and waits for the binder's
  // next full resync (15 s). Every PV, not only these: the binder's first
  // pass over the other scenarios' PVs (thousands in the full run) must not
  // load the apiserver under the runs either.
  await forEachLimited(indexes, bulkConcurrency, async (i) => {
    await admin.create(paths.persistentVolumes, persistentVolume(podPvName(i), { driver: benchDriverName, volumeHandle: podVolumeHandle(i) }));
  });
  await waitForEvery(admin, paths.persistentVolumes, ["Available", "Bound"]);
  await forEachLimited(indexes, bulkConcurrency, async (i) => {
    await admin.create(podPaths.claims(namespace), claimFor(claimName(i), podPvName(i)));
  });
  await waitForEvery(admin, podPaths.claims(namespace), ["Bound"]);
}

/** waitForEvery waits until every object of the collection at `path` is in one of `phases`. */
async function waitForEvery(admin: AdminClient, path: string, phases: readonly string[]): Promise<void> {
  const wanted = `${path} ${phases.join(" or ")}`;
  let status = "nothing listed yet";
  const check = async () => {
    const { items } = await admin.list<{ status?: { phase?: string } }>(path);
    const done = items.filter((item) => phases.includes(item.status?.phase ?? "")).length;
    status = `${done}/${items.length}`;
    if (done === items.length) return true;
    progress(`pods: ${status} of ${wanted}`);
    return false;
  };
  await waitForCondition(check, { description: `the PV binder: every object of ${wanted}`, timeoutMs: 300_000, intervalMs: 100, status: () => status });
}

/** runPods runs one attacher through one create-all/delete-all cycle of Pods. */
export async function runPods(ctx: BenchContext, binary: AttacherBinary, round: number, params: PodsParams, controllerManager: KubeControllerManager): Promise<RunResult> {
  const label = `pods-r${round}`;
  // Every run pays the PV finalizer writes, as in the other scenarios.
  await prepareOwnPvs(ctx.ground, ctx.ownPvs.count, ctx.ownPvs);
  const volumes = Array.from({ length: params.pods }, (_, i) => podVolume(i));
  const podNames = volumes.map((_, i) => `${label}-${binary.kind}-${i}`);
  const log = new NodeVolumesLog();
  await log.poll(ctx.ground.admin);
  const attacher = ctx.start(binary, label, params);
  try {
    await attacher.waitReady();
    ctx.watch.forget();
    log.forget();
    const cpuStart = attacher.cpuSeconds();
    const t0 = performance.now();
    await forEachLimited(podNames, bulkConcurrency, async (name, i) => {
      await ctx.ground.admin.create(podPaths.pods(namespace), podOnNode(name, volumes[i]?.node ?? "", [claimName(i)]));
    });
    const listed = () => volumes.filter((volume) => log.isListed(volume.key)).length;
    // Each check reads the Nodes first; the controller manager is watched too, since it makes the VAs.
    const untilNodes = (description: string, done: () => boolean, status: () => string) => {
      const readNodes = async () => {
        await log.poll(ctx.ground.admin);
        return done();
      };
      return ctx.waitFor(`${label} ${binary.kind}: ${description}`, readNodes, status, 300_000, [attacher.process, controllerManager.process]);
    };
    await untilNodes("every volume in volumesAttached", () => listed() === volumes.length, () => `${label} ${binary.kind}: ${listed()}/${volumes.length} in volumesAttached`);
    const attachedAt = Math.max(...volumes.map((volume) => log.appearedAt.get(volume.key) ?? t0));
    const vaAttachedAt = Math.max(...volumes.map((volume) => ctx.watch.attachedAt.get(volume.vaName) ?? t0));
    const vaLatencies = volumes.map((volume) => (ctx.watch.attachedAt.get(volume.vaName) ?? 0) - (ctx.watch.addedAt.get(volume.vaName) ?? 0)).sort((a, b) => a - b);

    const d0 = performance.now();
    // Deleted at once (grace period 0), as the kubelet does after unmounting:
    // the Pods are gone and the next run's may take their claims.
    await forEachLimited(podNames, bulkConcurrency, async (name) => {
      await ctx.ground.admin.request("DELETE", podPaths.pod(namespace, name), { gracePeriodSeconds: 0 });
    });
    await untilNodes("no volume in volumesAttached", () => listed() === 0, () => `${label} ${binary.kind}: ${listed()}/${volumes.length} still in volumesAttached`);
    const detachedAt = Math.max(...volumes.map((volume) => log.leftAt.get(volume.key) ?? d0));
    const vaNames = volumes.map((volume) => volume.vaName);
    // The next run starts with no VA left, or it would find them attached.
    await ctx.waitFor(`${label}: VAs gone`, () => ctx.watch.countGone(vaNames) === vaNames.length, () => `${label} ${binary.kind}: VAs gone ${ctx.watch.countGone(vaNames)}/${vaNames.length}`, 120_000, [attacher.process]);
    const cpu = attacher.cpuSeconds() - cpuStart;
    return {
      kind: binary.kind,
      round,
      metrics: {
        attachSeconds: round3((attachedAt - t0) / 1000),
        vaAttachedSeconds: round3((vaAttachedAt - t0) / 1000),
        vaP50Ms: round3(percentile(vaLatencies, 50)),
        vaP90Ms: round3(percentile(vaLatencies, 90)),
        detachSeconds: round3((detachedAt - d0) / 1000),
        cpuSecondsPer1000: round3((cpu * 1000) / params.pods),
        peakRssMiB: round3(attacher.hwmBytes() / 1048576),
      },
    };
  } finally {
    await attacher.stop();
  }
}
