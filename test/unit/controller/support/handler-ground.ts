import { toJson, type JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError, createRouterTransport } from "@connectrpc/connect";
import {
  Controller,
  ControllerPublishVolumeRequestSchema,
  ControllerUnpublishVolumeRequestSchema,
} from "../../../../gen/csi/v1/csi_pb";
import { CsiHandler } from "../../../../src/controller/csi-handler";
import { ForcedSyncs } from "../../../../src/controller/forced-syncs";
import { InheritedPublications } from "../../../../src/controller/inherited-publications";
import { PersistentVolumeFinalizerWriter } from "../../../../src/controller/pv-finalizer-writer";
import { VanishedVolumeAttachments } from "../../../../src/controller/vanished-volume-attachments";
import { VolumeAttachmentWriter } from "../../../../src/controller/va-writer";
import { CsiClient } from "../../../../src/csi/csi-client";
import type { JsonPatchOperation } from "../../../../src/kube/finalizer-patches";
import { KubeApiError } from "../../../../src/kube/errors";
import { parseCsiNode, type CsiNode } from "../../../../src/kube/objects/csi-node";
import { parsePersistentVolume, type PersistentVolume } from "../../../../src/kube/objects/persistent-volume";
import { parseVolumeAttachment, type VolumeAttachment } from "../../../../src/kube/objects/volume-attachment";
import { Store } from "../../../../src/kube/store";
import { Logger } from "../../../../src/log/logger";
import { FakeClock } from "../../queue/fake-clock";

/**
 * A CSI handler wired to in-memory fakes: the driver is a Connect router
 * transport, the API a recording fake that applies patches the way the API
 * server does for these simple cases. Every API call and every driver call
 * lands, in order, in `calls`, so a test asserts a whole sync with one
 * `toEqual`.
 */
export const driverName = "unit.csi.test";
export const finalizer = "external-attacher/unit-csi-test";
export const now = new Date("2026-11-22T10:00:00.500Z");
export const nowText = "2026-11-22T10:00:00Z";

export type Call =
  | { api: "patchVolumeAttachment"; name: string; patch: unknown; subresource?: "status" }
  | { api: "patchPersistentVolume"; name: string; patch: readonly JsonPatchOperation[] }
  | { api: "secretData"; namespace: string; name: string }
  | { csi: "ControllerPublishVolume" | "ControllerUnpublishVolume"; request: JsonValue };

/** A scripted driver answer: an error code, or (publish) a publish context; `hang` waits for the deadline. */
export type Answer = { code: Code; message?: string } | { publishContext: Record<string, string> } | { hang: true };

export interface GroundOptions {
  readonly vas?: readonly unknown[];
  readonly pvs?: readonly unknown[];
  readonly csiNodes?: readonly unknown[];
  readonly secrets?: Record<string, Record<string, string>>;
  readonly publishReadonly?: boolean;
  readonly singleNodeMultiWriter?: boolean;
  /** The driver lists where volumes are published (the reconciler runs). Default false. */
  readonly listsPublishedNodes?: boolean;
}

/** A Warning event the handler recorded: the object's kind and name, the reason and the message. */
export interface RecordedEvent {
  readonly kind: string;
  readonly name: string;
  readonly reason: string;
  readonly message: string;
}

export function createHandlerGround(options: GroundOptions = {}) {
  const calls: Call[] = [];
  const answers: Record<"ControllerPublishVolume" | "ControllerUnpublishVolume", Answer[]> = {
    ControllerPublishVolume: [],
    ControllerUnpublishVolume: [],
  };
  const vas = new Store<VolumeAttachment>();
  const pvs = new Store<PersistentVolume>();
  const csiNodes = new Store<CsiNode>();
  for (const raw of options.vas ?? []) vas.upsert(parseVolumeAttachment(raw));
  for (const raw of options.pvs ?? []) pvs.upsert(parsePersistentVolume(raw));
  for (const raw of options.csiNodes ?? []) csiNodes.upsert(parseCsiNode(raw));
  // The server's copies; the stores stand for the informers' caches.
  const serverVas = new Map<string, unknown>((options.vas ?? []).map((raw) => [nameOf(raw), structuredClone(raw)]));
  const serverPvs = new Map<string, unknown>((options.pvs ?? []).map((raw) => [nameOf(raw), structuredClone(raw)]));
  let resourceVersion = 100;

  const api = {
    async patchVolumeAttachment(name: string, patch: object, subresource?: "status"): Promise<VolumeAttachment> {
      calls.push(subresource ? { api: "patchVolumeAttachment", name, patch, subresource } : { api: "patchVolumeAttachment", name, patch });
      const current = serverVas.get(name);
      if (!current) throw new KubeApiError(404, "NotFound", `volumeattachments.storage.k8s.io ${JSON.stringify(name)} not found`);
      const next = applyMergePatch(current, patch) as { metadata: Record<string, unknown> };
      const finalizers = next.metadata.finalizers as string[] | undefined;
      // As kube-apiserver: a write that deletes the VA is answered with the
      // VA as written under the version it was last stored with.
      if (next.metadata.deletionTimestamp && (finalizers ?? []).length === 0) serverVas.delete(name);
      else {
        next.metadata.resourceVersion = String(++resourceVersion);
        serverVas.set(name, next);
      }
      // As AttacherApi: the answer goes through the cache's parseUnlessCached.
      const written = vas.parseUnlessCached(next, parseVolumeAttachment);
      vas.applyOwnWrite(written);
      return written;
    },
    async patchPersistentVolume(name: string, patch: readonly JsonPatchOperation[]): Promise<PersistentVolume> {
      calls.push({ api: "patchPersistentVolume", name, patch });
      const current = serverPvs.get(name) as { metadata: { finalizers?: string[] | null; resourceVersion?: string } } | undefined;
      if (!current) throw new KubeApiError(404, "NotFound", `persistentvolumes ${JSON.stringify(name)} not found`);
      const next = structuredClone(current);
      const finalizers = applyFinalizerPatch(current.metadata.finalizers, patch);
      if (finalizers === undefined) delete next.metadata.finalizers;
      else next.metadata.finalizers = finalizers;
      next.metadata.resourceVersion = String(++resourceVersion);
      serverPvs.set(name, next);
      const written = parsePersistentVolume(next);
      pvs.applyOwnWrite(written);
      return written;
    },
    async secretData(namespace: string, name: string): Promise<Record<string, string>> {
      calls.push({ api: "secretData", namespace, name });
      const data = options.secrets?.[`${namespace}/${name}`];
      if (!data) throw new KubeApiError(404, "NotFound", `secrets ${JSON.stringify(name)} not found`);
      return data;
    },
  };

  const transport = createRouterTransport(({ service }) => {
    service(Controller, {
      async controllerPublishVolume(request, context) {
        calls.push({ csi: "ControllerPublishVolume", request: toJson(ControllerPublishVolumeRequestSchema, request) });
        const answer = answers.ControllerPublishVolume.shift();
        if (answer && "hang" in answer) await hangUntil(context.signal);
        if (answer && "code" in answer) throw new ConnectError(answer.message ?? "scripted", answer.code);
        return { publishContext: answer && "publishContext" in answer ? answer.publishContext : {} };
      },
      async controllerUnpublishVolume(request, context) {
        calls.push({ csi: "ControllerUnpublishVolume", request: toJson(ControllerUnpublishVolumeRequestSchema, request) });
        const answer = answers.ControllerUnpublishVolume.shift();
        if (answer && "hang" in answer) await hangUntil(context.signal);
        if (answer && "code" in answer) throw new ConnectError(answer.message ?? "scripted", answer.code);
        return {};
      },
    });
  });

  const forcedSyncs = new ForcedSyncs();
  const log = new Logger({ sink: () => {} });
  const vanished = new VanishedVolumeAttachments({ driverName, log });
  const inherited = new InheritedPublications();
  const events: RecordedEvent[] = [];
  const writer = new VolumeAttachmentWriter({ api, driverName, clock: new FakeClock(now.getTime()) });
  const handler = new CsiHandler({
    driverName,
    csi: new CsiClient(transport),
    api,
    writer,
    pvWriter: new PersistentVolumeFinalizerWriter({ api, driverName }),
    pvs,
    vas,
    csiNodes,
    forcedSyncs,
    vanished,
    inherited,
    listsPublishedNodes: options.listsPublishedNodes ?? false,
    events: { warning: (object, reason, message) => void events.push({ kind: object.kind, name: object.name, reason, message }) },
    log,
    timeoutMs: 50,
    supportsPublishReadonly: options.publishReadonly ?? false,
    supportsSingleNodeMultiWriter: options.singleNodeMultiWriter ?? false,
    defaultFsType: "ext4",
  });

  return {
    handler,
    writer,
    calls,
    vas,
    pvs,
    forcedSyncs,
    vanished,
    inherited,
    events,
    csiNodes,
    /** sync runs the handler's sync of the queued name `name`, with the cached VA as the attach controller reads it. */
    sync(name: string): Promise<string | undefined> {
      return handler.syncVolumeAttachment(name, vas.get(name));
    },
    /** script queues answers for the next calls of `method`. */
    script(method: keyof typeof answers, ...next: Answer[]) {
      answers[method].push(...next);
    },
    /** va is the cached VA named `name` (what the next sync would read). */
    va(name: string): VolumeAttachment {
      const va = vas.get(name);
      if (!va) throw new Error(`no cached VA ${name}`);
      return va;
    },
    pv(name: string): PersistentVolume {
      const pv = pvs.get(name);
      if (!pv) throw new Error(`no cached PV ${name}`);
      return pv;
    },
    /** addVa creates a VA on the server and delivers it to the cache. */
    addVa(raw: unknown): void {
      serverVas.set(nameOf(raw), structuredClone(raw));
      vas.upsert(parseVolumeAttachment(raw));
    },
    /** vanish deletes a VA outright, finalizers and all, as kube-apiserver's delete race does (kubernetes#77988); returns its last state. */
    vanish(name: string): VolumeAttachment {
      const last = vas.get(name);
      if (!last) throw new Error(`no cached VA ${name}`);
      serverVas.delete(name);
      vas.remove(last);
      return last;
    },
    /** serverVa is the server's copy (undefined once deleted). */
    serverVa(name: string): unknown {
      return serverVas.get(name);
    },
  };
}

function nameOf(raw: unknown): string {
  return (raw as { metadata: { name: string } }).metadata.name;
}

function hangUntil(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    signal.addEventListener("abort", () => reject(new ConnectError("hung call given up", Code.DeadlineExceeded)), { once: true });
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** applyMergePatch is RFC 7386 as the API server applies a merge patch. */
function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}

/** applyFinalizerPatch applies the RFC 6902 finalizer operations the handler sends, failing a `test` as the server does. */
function applyFinalizerPatch(finalizers: string[] | null | undefined, patch: readonly JsonPatchOperation[]): string[] | undefined {
  let list = finalizers ? [...finalizers] : undefined;
  for (const operation of patch) {
    const index = operation.path.replace(/^\/metadata\/finalizers\/?/, "");
    const fail = () => new KubeApiError(422, "Invalid", `the server rejected our request due to an error in our request: ${JSON.stringify(operation)}`);
    if (operation.op === "test") {
      const actual = index === "" ? (list ?? null) : list?.[Number(index)];
      if (JSON.stringify(actual) !== JSON.stringify(operation.value)) throw fail();
    } else if (operation.op === "remove") {
      list?.splice(Number(index), 1);
    } else if (index === "") {
      list = [...(operation.value as string[])];
    } else if (index === "-") {
      list = [...(list ?? []), operation.value as string];
    } else {
      throw fail();
    }
  }
  return list;
}
