import { grpcCode } from "../csi/errors";
import type { AttacherApi } from "./attacher-api";
import { isNotFound } from "../kube/errors";
import type { EventRecorder } from "../kube/event-recorder";
import { createMergePatch, isEmptyPatch } from "../kube/merge-patch";
import { volumeAttachmentReference } from "../kube/objects/event";
import type { VolumeAttachment } from "../kube/objects/volume-attachment";
import { realClock, type Clock } from "../util/clock";
import { errorMessage } from "../util/error-message";
import { nodeIdAnnotation } from "./annotations";
import { finalizerName } from "./driver-names";
import { carriesOurFinalizer } from "./our-finalizer";

/** The one API call the writer makes; AttacherApi in production, a recording fake in unit tests. */
export type VolumeAttachmentPatcher = Pick<AttacherApi, "patchVolumeAttachment">;

export interface VolumeAttachmentWriterOptions {
  /** Sends the patches (and puts the server's answer into the VA cache). */
  readonly api: VolumeAttachmentPatcher;
  /** The CSI driver's name; the VA finalizer is derived from it. */
  readonly driverName: string;
  /** Stamps the saved errors' time. Default: realClock. */
  readonly clock?: Clock;
  /**
   * Record the gRPC code of a failed attach in `attachError.errorCode`.
   * Upstream does so only with its MutableCSINodeAllocatableCount feature
   * gate on; the spec asks for it always. Default: true.
   */
  readonly attachErrorCodes?: boolean;
  /**
   * Where a Warning event (AttachFailed / DetachFailed) about the VA goes
   * with each saved error, so `kubectl describe volumeattachment` says why
   * (beyond upstream, which has no events for these). Default: no events.
   */
  readonly events?: Pick<EventRecorder, "warning">;
}

type Status = NonNullable<VolumeAttachment["status"]>;

interface ResolvedVolumeAttachmentWriterOptions {
  readonly api: VolumeAttachmentPatcher;
  readonly driverName: string;
  readonly clock: Clock;
  readonly attachErrorCodes: boolean;
  readonly events: Pick<EventRecorder, "warning"> | undefined;
}

/** resolveVolumeAttachmentWriterOptions fills the defaults of every optional field. */
function resolveVolumeAttachmentWriterOptions(options: VolumeAttachmentWriterOptions): ResolvedVolumeAttachmentWriterOptions {
  return {
    api: options.api,
    driverName: options.driverName,
    clock: options.clock ?? realClock,
    attachErrorCodes: options.attachErrorCodes ?? true,
    events: options.events,
  };
}

/**
 * VolumeAttachmentWriter is the one owner of every write the attacher makes
 * to a VA: the finalizer and node-ID annotation before a publish, the
 * attached / detached status after it, the finalizer's removal, and the
 * saved attach and detach errors. Each write is a JSON merge patch computed
 * as the difference between the VA we acted on and the VA we want, as
 * upstream's are, so fields other writers own are never overwritten. Each
 * returns the VA the server answered with (AttacherApi has already put it
 * into the cache), which is what the next write of the same sync is
 * computed against.
 */
export class VolumeAttachmentWriter {
  private readonly driverName: string;
  /** The finalizer this attacher puts on VAs of its driver (the PV writer derives the same one). */
  private readonly finalizer: string;
  private readonly api: VolumeAttachmentPatcher;
  private readonly clock: Clock;
  private readonly attachErrorCodes: boolean;
  private readonly events: Pick<EventRecorder, "warning"> | undefined;

  constructor(options: VolumeAttachmentWriterOptions) {
    const resolved = resolveVolumeAttachmentWriterOptions(options);
    this.api = resolved.api;
    this.driverName = resolved.driverName;
    this.finalizer = finalizerName(resolved.driverName);
    this.clock = resolved.clock;
    this.attachErrorCodes = resolved.attachErrorCodes;
    this.events = resolved.events;
  }

  /**
   * ensureFinalizerAndNodeId makes sure the VA has our finalizer and
   * remembers `nodeId` in its annotation, in one merge patch; no request when
   * both are there. It must succeed before ControllerPublish: a published
   * volume without the finalizer could be deleted without a detach, and
   * without the annotation a node that disappears could not be detached.
   */
  async ensureFinalizerAndNodeId(va: VolumeAttachment, nodeId: string): Promise<VolumeAttachment> {
    const finalizers = va.metadata.finalizers ?? [];
    const annotations = va.metadata.annotations ?? {};
    const wantsFinalizer = !carriesOurFinalizer(va, this.driverName);
    try {
      return await this.patch(
        va,
        { metadata: { finalizers: va.metadata.finalizers ?? undefined, annotations: va.metadata.annotations ?? undefined } },
        {
          metadata: {
            finalizers: wantsFinalizer ? [...finalizers, this.finalizer] : va.metadata.finalizers ?? undefined,
            annotations: { ...annotations, [nodeIdAnnotation]: nodeId },
          },
        },
      );
    } catch (e: unknown) {
      throw new Error(`could not save VolumeAttachment: ${errorMessage(e)}`, { cause: e });
    }
  }

  /**
   * markAttached sets `attached: true`, the driver's publish context as
   * `attachmentMetadata`, and drops `attachError`. No request when the status
   * says all that already (a forced sync that found nothing new).
   */
  async markAttached(va: VolumeAttachment, publishContext: Record<string, string>): Promise<VolumeAttachment> {
    const { attachError: _dropped, ...rest } = va.status ?? { attached: false };
    const next: Status = { ...rest, attached: true };
    if (Object.keys(publishContext).length > 0) next.attachmentMetadata = publishContext;
    else delete next.attachmentMetadata;
    return this.patch(va, { status: va.status ?? {} }, { status: next }, "status");
  }

  /**
   * markDetached first removes our finalizer, then sets `attached: false`
   * without detachError and attachmentMetadata. The order matters: a deleted
   * VA without our finalizer is detached, while one that still has it and
   * says `attached: false` may be a timed-out attach that must be unpublished
   * again. A NotFound on the status patch means the VA is gone: detached.
   * A failure is wrapped in upstream's words.
   */
  async markDetached(va: VolumeAttachment): Promise<void> {
    try {
      await this.removeFinalizerThenMarkDetached(va);
    } catch (e: unknown) {
      throw new Error(`could not mark as detached: ${errorMessage(e)}`, { cause: e });
    }
  }

  private async removeFinalizerThenMarkDetached(va: VolumeAttachment): Promise<void> {
    const hasFinalizer = carriesOurFinalizer(va, this.driverName);
    if (!hasFinalizer && !va.status?.attached) return;
    let current = va;
    if (hasFinalizer) {
      current = await this.removeFinalizer(va);
      // Removing the last finalizer of a VA being deleted deletes it: a status
      // patch now could only answer NotFound (upstream sends it anyway).
      if (current.metadata.deletionTimestamp && (current.metadata.finalizers ?? []).length === 0) return;
    }
    const { detachError: _detachError, attachmentMetadata: _metadata, ...rest } = current.status ?? { attached: false };
    try {
      await this.patch(current, { status: current.status ?? {} }, { status: { ...rest, attached: false } }, "status");
    } catch (e: unknown) {
      if (!isNotFound(e)) throw e;
    }
  }

  /** removeFinalizer drops our finalizer from the VA's list (a merge patch replaces the whole list, as upstream's does). */
  private async removeFinalizer(va: VolumeAttachment): Promise<VolumeAttachment> {
    const remaining = (va.metadata.finalizers ?? []).filter((name) => name !== this.finalizer);
    // Go marshals an empty finalizer list as absent, so the patch says null.
    return this.patch(va, { metadata: { finalizers: va.metadata.finalizers ?? undefined } }, { metadata: { finalizers: remaining.length > 0 ? remaining : undefined } });
  }

  /** saveAttachError records why an attach failed in `status.attachError`, with the gRPC code when there is one. */
  async saveAttachError(va: VolumeAttachment, error: unknown): Promise<VolumeAttachment> {
    const attachError = this.volumeError(error, this.attachErrorCodes);
    this.events?.warning(volumeAttachmentReference(va.metadata), "AttachFailed", attachError.message);
    return this.patch(va, { status: va.status ?? {} }, { status: { ...(va.status ?? { attached: false }), attachError } }, "status");
  }

  /** saveDetachError records why a detach failed in `status.detachError`; upstream v4.13 sets no errorCode here. */
  async saveDetachError(va: VolumeAttachment, error: unknown): Promise<VolumeAttachment> {
    const detachError = this.volumeError(error, false);
    this.events?.warning(volumeAttachmentReference(va.metadata), "DetachFailed", detachError.message);
    return this.patch(va, { status: va.status ?? {} }, { status: { ...(va.status ?? { attached: false }), detachError } }, "status");
  }

  /**
   * patch is the writer's one patch helper, as upstream's patchVA: it sends
   * the JSON merge patch that turns `before` (fields of `va` as cached) into
   * `after`, nothing when they agree.
   * Every VA write of the attacher passes here. Resolves with the VA to go
   * on with: the server's answer, or `va` when nothing was sent.
   */
  private async patch(va: VolumeAttachment, before: object, after: object, subresource?: "status"): Promise<VolumeAttachment> {
    const patch = createMergePatch(before, after);
    if (isEmptyPatch(patch)) return va;
    return this.api.patchVolumeAttachment(va.metadata.name, patch, subresource);
  }

  private volumeError(error: unknown, withCode: boolean): { message: string; time: string; errorCode?: number } {
    // metav1.Time serializes to whole seconds in RFC 3339.
    const time = new Date(this.clock.now()).toISOString().replace(/\.\d+Z$/, "Z");
    const message = errorMessage(error);
    const code = withCode ? grpcCode(error) : undefined;
    return code === undefined ? { message, time } : { message, time, errorCode: code };
  }
}
