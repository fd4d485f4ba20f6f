import type { AttacherApi } from "../kube/attacher-api";
import { isNotFound } from "../kube/errors";
import { createMergePatch, isEmptyPatch, type JsonObject } from "../kube/merge-patch";
import type { VolumeAttachment } from "../kube/objects/volume-attachment";
import { grpcCode } from "../csi/errors";
import { errorMessage } from "../util/error-message";

/**
 * The VA writes that record an outcome, each a merge patch computed as the
 * difference between the VA we acted on and the VA we want, as upstream does.
 */

type Status = NonNullable<VolumeAttachment["status"]>;

function statusPatch(va: VolumeAttachment, next: Status): JsonObject {
  return createMergePatch({ status: va.status ?? {} }, { status: next });
}

/** markAsAttached: `attached: true`, the driver's publish context as metadata, no attachError. */
export async function markAsAttached(api: AttacherApi, va: VolumeAttachment, publishContext: Record<string, string>): Promise<VolumeAttachment> {
  const { attachError: _dropped, ...rest } = va.status ?? { attached: false };
  const next: Status = { ...rest, attached: true };
  if (Object.keys(publishContext).length > 0) next.attachmentMetadata = publishContext;
  else delete next.attachmentMetadata;
  return api.patchVolumeAttachment(va.metadata.name, statusPatch(va, next), "status");
}

/**
 * markAsDetached first drops our finalizer, then sets `attached: false`
 * without detachError and attachmentMetadata. The order matters: a deleted
 * VA without our finalizer is detached, while one that still has it and says
 * `attached: false` may be a timed-out attach that must be unpublished again.
 * A NotFound on the status patch means the VA is gone: detached.
 */
export async function markAsDetached(api: AttacherApi, va: VolumeAttachment, finalizer: string): Promise<void> {
  const finalizers = va.metadata.finalizers ?? [];
  const hasFinalizer = finalizers.includes(finalizer);
  if (!hasFinalizer && !va.status?.attached) return;
  let current = va;
  if (hasFinalizer) {
    const remaining = finalizers.filter((name) => name !== finalizer);
    // Go marshals an empty finalizer list as absent, so the patch says null.
    const patch = { metadata: { finalizers: remaining.length > 0 ? remaining : null } };
    current = await api.patchVolumeAttachment(va.metadata.name, patch);
    // Removing the last finalizer of a VA being deleted deletes it: a status
    // patch now could only answer NotFound (upstream sends it anyway).
    if (current.metadata.deletionTimestamp && (current.metadata.finalizers ?? []).length === 0) return;
  }
  const { detachError: _detachError, attachmentMetadata: _metadata, ...rest } = current.status ?? { attached: false };
  const patch = statusPatch(current, { ...rest, attached: false });
  if (isEmptyPatch(patch)) return;
  try {
    await api.patchVolumeAttachment(va.metadata.name, patch, "status");
  } catch (e: unknown) {
    if (!isNotFound(e)) throw e;
  }
}

/** saveAttachError records why an attach failed in `status.attachError`, with the gRPC code when there is one. */
export async function saveAttachError(api: AttacherApi, va: VolumeAttachment, error: unknown, now: Date): Promise<void> {
  const next: Status = { ...(va.status ?? { attached: false }), attachError: volumeError(error, now, true) };
  await api.patchVolumeAttachment(va.metadata.name, statusPatch(va, next), "status");
}

/** saveDetachError records why a detach failed in `status.detachError` (upstream sets no errorCode here). */
export async function saveDetachError(api: AttacherApi, va: VolumeAttachment, error: unknown, now: Date): Promise<void> {
  const next: Status = { ...(va.status ?? { attached: false }), detachError: volumeError(error, now, false) };
  await api.patchVolumeAttachment(va.metadata.name, statusPatch(va, next), "status");
}

function volumeError(error: unknown, now: Date, withCode: boolean): { message: string; time: string; errorCode?: number } {
  // metav1.Time serializes to whole seconds in RFC 3339.
  const time = now.toISOString().replace(/\.\d+Z$/, "Z");
  const message = errorMessage(error);
  const code = withCode ? grpcCode(error) : undefined;
  return code === undefined ? { message, time } : { message, time, errorCode: code };
}
