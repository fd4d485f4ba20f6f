/**
 * Floor (b): the barest compiled Bun client that does an attacher's work.
 * For each VolumeAttachment of its driver it makes the API writes an
 * attacher makes (bench/lib/bare-client-writes.ts, the limit scenario's) and
 * the ControllerPublish / ControllerUnpublish call, and nothing else: no
 * list, no cache, no work queue, no retries, no metrics. One watch on
 * VolumeAttachments tells it what to do; the PV and CSINode each attach or
 * detach needs are read when needed (GET), since nothing is cached. At most
 * --worker-threads VAs are handled at once, in arrival order.
 *
 * With FLOOR_CACHES=1 in its environment it caches PVs and CSINodes instead
 * of reading them (floor-caches.ts): the floor of a caching attacher.
 *
 * The bench compares ours with it: what ours costs above it is our code's,
 * the rest the runtime's.
 *
 *   bare-attacher --kubeconfig=PATH --csi-address=SOCKET --worker-threads=N   (other flags ignored)
 */
// First, as in src/entry.ts: the floor runs with the runtime options the attacher runs with, so ours/floor compares code, not runtime options.
import "../../src/util/reexec-with-runtime-options";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  ControllerPublishVolumeRequestSchema,
  ControllerPublishVolumeResponseSchema,
  ControllerUnpublishVolumeRequestSchema,
  GetPluginInfoRequestSchema,
  GetPluginInfoResponseSchema,
} from "../../gen/csi/v1/csi_pb";
import { finalizerName } from "../../src/controller/driver-names";
import { attachWrites, detachWrites, nodeIdAnnotation, type BareWrite } from "../lib/bare-client-writes";
import type { Http2ClientSession } from "../../src/http2/client-session";
import { FloorCaches, floorCachesWanted } from "./floor-caches";
import { apiFetch, connectDriver, exitOnSignals, flagValue, grpcUnary, readApiTarget, type ApiTarget } from "./floor-connections";
import { watchEvents } from "./floor-watch";

interface Va {
  metadata: { name: string; deletionTimestamp?: string; finalizers?: string[]; annotations?: Record<string, string> };
  spec: { attacher: string; nodeName: string; source: { persistentVolumeName?: string } };
  status?: { attached?: boolean };
}
interface Pv {
  metadata?: { finalizers?: string[] };
  spec: { accessModes?: string[]; csi?: { volumeHandle: string; fsType?: string } };
}
interface CsiNode {
  spec: { drivers?: { name: string; nodeID: string }[] };
}

exitOnSignals();
const argv = process.argv.slice(2);
const workers = Number(flagValue(argv, "worker-threads") ?? "10");
// Set once in main(), before any event is handled.
let target: ApiTarget;
let session: Http2ClientSession;
let driver = "";
let finalizer = "";
/** Set in main() with FLOOR_CACHES=1; otherwise every PV and CSINode is read when needed. */
let caches: FloorCaches | undefined;

/** VAs being handled now, and VAs attached by this process (a late event of its own patches must not attach one twice). */
const busy = new Set<string>();
const attached = new Set<string>();
const waiting: (() => Promise<void>)[] = [];
let running = 0;

function run(job: () => Promise<void>): void {
  waiting.push(job);
  pump();
}

function pump(): void {
  while (running < workers && waiting.length > 0) {
    const next = waiting.shift() as () => Promise<void>;
    running++;
    next()
      .catch((e: unknown) => process.stderr.write(`floor: ${e instanceof Error ? e.message : String(e)}\n`))
      .finally(() => {
        running--;
        pump();
      });
  }
}

async function send(writes: readonly BareWrite[]): Promise<void> {
  for (const write of writes) {
    const contentType = write.type === "json" ? "application/json-patch+json" : "application/merge-patch+json";
    await (await apiFetch(target, write.path, { method: "PATCH", contentType, body: JSON.stringify(write.body) })).arrayBuffer();
  }
}

async function readPv(name: string): Promise<Pv> {
  return caches?.pvs.items.get(name) ?? ((await (await apiFetch(target, `/api/v1/persistentvolumes/${name}`)).json()) as Pv);
}

async function readCsiNode(name: string): Promise<CsiNode> {
  return caches?.csiNodes.items.get(name) ?? ((await (await apiFetch(target, `/apis/storage.k8s.io/v1/csinodes/${name}`)).json()) as CsiNode);
}

function capability(pv: Pv) {
  const modes = pv.spec.accessModes ?? [];
  // SINGLE_NODE_WRITER, MULTI_NODE_READER_ONLY, MULTI_NODE_MULTI_WRITER: what an attacher maps RWO, ROX, RWX to.
  const mode = modes.includes("ReadWriteMany") ? 5 : modes.includes("ReadOnlyMany") ? 3 : 1;
  return { accessType: { case: "mount" as const, value: { fsType: pv.spec.csi?.fsType ?? "", mountFlags: [] } }, accessMode: { mode } };
}

async function attach(va: Va): Promise<void> {
  const pvName = va.spec.source.persistentVolumeName ?? "";
  const pv = await readPv(pvName);
  const csiNode = await readCsiNode(va.spec.nodeName);
  const nodeId = csiNode.spec.drivers?.find((d) => d.name === driver)?.nodeID ?? "";
  const [pvWrite, vaWrite] = attachWrites({ name: va.metadata.name, pvName, nodeId, attachmentMetadata: {} }, finalizer);
  // Without caches the floor cannot know the PV has our finalizer without a read it does not make, so it writes it each time.
  const pvHasFinalizer = caches !== undefined && pv.metadata?.finalizers?.includes(finalizer) === true;
  await send([pvHasFinalizer ? undefined : pvWrite, vaWrite].filter((w): w is BareWrite => w !== undefined));
  const request = create(ControllerPublishVolumeRequestSchema, { volumeId: pv.spec.csi?.volumeHandle ?? "", nodeId, volumeCapability: capability(pv), readonly: false });
  const answer = fromBinary(ControllerPublishVolumeResponseSchema, await grpcUnary(session, "/csi.v1.Controller/ControllerPublishVolume", toBinary(ControllerPublishVolumeRequestSchema, request)));
  const status = attachWrites({ name: va.metadata.name, pvName, nodeId, attachmentMetadata: answer.publishContext }, finalizer)[2];
  if (status !== undefined) await send([status]);
  attached.add(va.metadata.name);
}

async function detach(va: Va): Promise<void> {
  const pv = await readPv(va.spec.source.persistentVolumeName ?? "");
  const nodeId = va.metadata.annotations?.[nodeIdAnnotation] ?? "";
  const request = create(ControllerUnpublishVolumeRequestSchema, { volumeId: pv.spec.csi?.volumeHandle ?? "", nodeId });
  await grpcUnary(session, "/csi.v1.Controller/ControllerUnpublishVolume", toBinary(ControllerUnpublishVolumeRequestSchema, request));
  await send(detachWrites(va.metadata.name));
}

function onEvent(type: string, va: Va): void {
  const name = va.metadata.name;
  if (type === "DELETED") {
    attached.delete(name);
    return;
  }
  if (va.spec.attacher !== driver || busy.has(name)) return;
  let job: ((va: Va) => Promise<void>) | undefined;
  if (va.metadata.deletionTimestamp !== undefined) job = va.metadata.finalizers?.includes(finalizer) === true ? detach : undefined;
  else if (va.status?.attached !== true && !attached.has(name)) job = attach;
  if (job === undefined) return;
  const work = job;
  busy.add(name);
  run(() => work(va).finally(() => busy.delete(name)));
}

async function main(): Promise<void> {
  target = await readApiTarget(flagValue(argv, "kubeconfig") ?? "");
  session = await connectDriver(flagValue(argv, "csi-address") ?? "");
  const info = fromBinary(GetPluginInfoResponseSchema, await grpcUnary(session, "/csi.v1.Identity/GetPluginInfo", toBinary(GetPluginInfoRequestSchema, create(GetPluginInfoRequestSchema))));
  driver = info.name;
  finalizer = finalizerName(driver);
  if (floorCachesWanted()) {
    caches = new FloorCaches(target);
    await caches.sync();
  }
  process.stderr.write('"Floor ready"\n');
  // kube-apiserver ends a watch it finds too slow to read (a loaded machine's 300-VA burst did): watch again, as any client does.
  for (;;) {
    await watchVas();
    process.stderr.write("floor: the watch ended; watching again\n");
  }
}

/** watchVas hands every event of one VA watch to onEvent until the server ends it. */
async function watchVas(): Promise<void> {
  // A watch without a resourceVersion first sends every existing VA as ADDED: that is the only "list" (handled VAs are skipped).
  await watchEvents<Va>(target, "/apis/storage.k8s.io/v1/volumeattachments?watch=1", onEvent);
}

main().catch((e: unknown) => {
  process.stderr.write(`floor: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
