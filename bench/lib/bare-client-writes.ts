/**
 * The API writes an attacher makes for one VA, and nothing else: what the
 * bare client of the limit scenario sends. They restate, as plain requests,
 * what src/controller/csi-handler.ts and src/controller/va-writer.ts send on
 * a first attach of a VA whose PV lacks the finalizer, and on its deletion.
 */
import type { JsonPatchOperation, PatchType } from "../../test/ground/admin-client";
import { paths } from "../../test/ground/objects";

/** The annotation in which an attacher remembers the node ID it published to. */
export const nodeIdAnnotation = "csi.alpha.kubernetes.io/node-id";

/** BareWrite is one PATCH request. */
export interface BareWrite {
  readonly path: string;
  readonly type: PatchType;
  readonly body: object | JsonPatchOperation[];
}

/** BareVa is what the bare client is told about one VA: it reads nothing from the API. */
export interface BareVa {
  readonly name: string;
  readonly pvName: string;
  readonly nodeId: string;
  /** What the driver's publish context would have been; an attacher copies it into the status. */
  readonly attachmentMetadata: Readonly<Record<string, string>>;
}

/**
 * attachWrites are an attach's three writes, in an attacher's order: the PV
 * finalizer (a JSON patch appending to the PV's list, which the apiserver's
 * pv-protection finalizer makes non-empty), the VA finalizer with the
 * node-ID annotation (one merge patch), and the status subresource.
 */
export function attachWrites(va: BareVa, finalizer: string): BareWrite[] {
  return [
    { path: paths.persistentVolume(va.pvName), type: "json", body: [{ op: "add", path: "/metadata/finalizers/-", value: finalizer }] },
    { path: paths.volumeAttachment(va.name), type: "merge", body: { metadata: { finalizers: [finalizer], annotations: { [nodeIdAnnotation]: va.nodeId } } } },
    { path: `${paths.volumeAttachment(va.name)}/status`, type: "merge", body: { status: { attached: true, attachmentMetadata: va.attachmentMetadata } } },
  ];
}

/**
 * detachWrites is a detach's one write: the VA's finalizer goes (the list
 * held only ours, so the merge patch says null, as an attacher's does); the
 * VA is being deleted, so the apiserver then removes it and no status patch
 * follows.
 */
export function detachWrites(vaName: string): BareWrite[] {
  return [{ path: paths.volumeAttachment(vaName), type: "merge", body: { metadata: { finalizers: null } } }];
}
