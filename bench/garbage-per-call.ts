/**
 * garbage-per-call: JS heap bytes one call of a per-VA step allocates, the
 * floor client's way and ours, to say where the bench's garbage per VA
 * cycle (`bench/run.ts --gc-log`) comes from (issue 24).
 *
 *   bun run bench/garbage-per-call.ts [calls=200000]
 *
 * Each step runs `calls` times in a synchronous loop in a child `bun` with
 * JSC's GC log on and Bun's GC timer off (BUN_JSC_logGC=1,
 * BUN_GC_TIMER_DISABLE=1; the attacher's tiers, DFG and FTL off): no timer
 * collects, so every collection is one the allocation threshold asked for,
 * and its log line carries JSC's own count of the bytes allocated since the
 * last (bench/lib/jsc-gc-log.ts); start-up's allocations are collected
 * before the loop. What the last eden held when the loop
 * ended is not counted: at most ~8 MiB over all calls, under 3% at the
 * default count for steps of ~2 KB. The objects are a VA and a PV as kube-apiserver sends them
 * in the watch after an attach (managedFields included).
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { ControllerPublishVolumeRequestSchema, ControllerPublishVolumeResponseSchema } from "../gen/csi/v1/csi_pb";
import { cachedObjectParsers } from "../src/controller/cached-objects";
import { tallyGcLog } from "./lib/jsc-gc-log";

const driver = "bench.csi.test";
const managedFields = (manager: string, fields: object) => ({ manager, operation: "Update", apiVersion: "storage.k8s.io/v1", time: "2026-11-26T13:00:00Z", fieldsType: "FieldsV1", fieldsV1: fields });
const vaEvent = JSON.stringify({
  type: "MODIFIED",
  object: {
    kind: "VolumeAttachment",
    apiVersion: "storage.k8s.io/v1",
    metadata: {
      name: "tp-w10-q1000-r1-ours-000123",
      uid: "5c1e0d1a-8f0b-4bb4-a1f6-3d5c1f1b2a77",
      resourceVersion: "123456",
      generation: 1,
      creationTimestamp: "2026-11-26T13:00:00Z",
      annotations: { "csi.alpha.kubernetes.io/node-id": "bench-node-1" },
      finalizers: [`external-attacher/${driver.replaceAll(".", "-")}`],
      managedFields: [
        managedFields("bench", { "f:spec": { "f:attacher": {}, "f:nodeName": {}, "f:source": { "f:persistentVolumeName": {} } } }),
        managedFields("csi-attacher", { "f:metadata": { "f:annotations": { ".": {}, "f:csi.alpha.kubernetes.io/node-id": {} }, "f:finalizers": { ".": {}, 'v:"external-attacher/bench-csi-test"': {} } } }),
        { ...managedFields("csi-attacher", { "f:status": { "f:attached": {} } }), subresource: "status" },
      ],
    },
    spec: { attacher: driver, nodeName: "bench-node-1", source: { persistentVolumeName: "bench-pv-000123" } },
    status: { attached: true },
  },
});
const pvEvent = JSON.stringify({
  type: "MODIFIED",
  object: {
    kind: "PersistentVolume",
    apiVersion: "v1",
    metadata: {
      name: "bench-pv-000123",
      uid: "0b7e9a52-6f57-4f0e-9d0e-8f3c1c3e1b11",
      resourceVersion: "123450",
      creationTimestamp: "2026-11-26T12:59:00Z",
      finalizers: ["kubernetes.io/pv-protection", "external-attacher/bench-csi-test"],
      managedFields: [
        managedFields("bench", { "f:spec": { "f:accessModes": {}, "f:capacity": { ".": {}, "f:storage": {} }, "f:csi": { ".": {}, "f:driver": {}, "f:volumeHandle": {} }, "f:persistentVolumeReclaimPolicy": {}, "f:volumeMode": {} } }),
        managedFields("csi-attacher", { "f:metadata": { "f:finalizers": { 'v:"external-attacher/bench-csi-test"': {} } } }),
        { ...managedFields("kube-controller-manager", { "f:status": { "f:phase": {} } }), subresource: "status" },
      ],
    },
    spec: { capacity: { storage: "1Gi" }, csi: { driver, volumeHandle: "vol-000123" }, accessModes: ["ReadWriteOnce"], persistentVolumeReclaimPolicy: "Retain", volumeMode: "Filesystem" },
    status: { phase: "Available" },
  },
});
const publishAnswer = toBinary(ControllerPublishVolumeResponseSchema, create(ControllerPublishVolumeResponseSchema, { publishContext: { devicePath: "/dev/bench" } }));

/** The steps: what one call does; the result is kept in `sink` so nothing is optimized away. */
const steps: Record<string, () => unknown> = {
  "VA watch event: JSON.parse (the floor)": () => JSON.parse(vaEvent),
  "VA watch event: JSON.parse + our cache's parser (valibot, slimming, interning)": () => parsers.volumeAttachment((JSON.parse(vaEvent) as { object: unknown }).object),
  "PV watch event: JSON.parse (the floor)": () => JSON.parse(pvEvent),
  "PV watch event: JSON.parse + our cache's parser": () => parsers.persistentVolume((JSON.parse(pvEvent) as { object: unknown }).object),
  "ControllerPublish: request encoded, answer decoded (protobuf-es, both)": () => [
    toBinary(ControllerPublishVolumeRequestSchema, create(ControllerPublishVolumeRequestSchema, { volumeId: "vol-000123", nodeId: "bench-node-1" })),
    fromBinary(ControllerPublishVolumeResponseSchema, publishAnswer),
  ],
};
const parsers = cachedObjectParsers(driver);
let sink: unknown;
const loopMarker = "garbage-per-call: the loop starts";

const [stepName, callsText] = [process.env["GARBAGE_STEP"], process.argv[2] ?? "200000"];
const calls = Number(callsText);
if (stepName !== undefined) {
  // The child: one step, in a loop no timer interrupts.
  const step = steps[stepName];
  if (step === undefined) throw new Error(`no step ${stepName}`);
  // Start-up's allocations go in a full collection first; only what follows the marker is counted.
  Bun.gc(true);
  process.stderr.write(`${loopMarker}\n`);
  for (let i = 0; i < calls; i++) sink = step();
  process.stdout.write(sink === undefined ? "" : "done\n");
} else {
  for (const name of Object.keys(steps)) {
    const child = Bun.spawnSync([process.execPath, import.meta.path, callsText], {
      env: { ...process.env, GARBAGE_STEP: name, BUN_JSC_logGC: "1", BUN_GC_TIMER_DISABLE: "1", BUN_JSC_useDFGJIT: "0", BUN_JSC_useFTLJIT: "0" },
      stdout: "pipe",
      stderr: "pipe",
    });
    if (child.exitCode !== 0) throw new Error(`${name}: exited ${child.exitCode}: ${child.stderr.toString().slice(-500)}`);
    const [before = "", loop = ""] = child.stderr.toString().split(loopMarker);
    const tally = tallyGcLog(loop, tallyGcLog(before, 0).lastHeapKb);
    console.log(`${name}: ${(tally.allocatedBytes / calls).toFixed(0)} bytes per call (${tally.collections} collections, ${tally.byThreshold} by the threshold, ${calls} calls)`);
  }
}
