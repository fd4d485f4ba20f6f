import type { CsiClient } from "../csi/csi-client";
import type { AttacherApi } from "../kube/attacher-api";
import { addFinalizerPatch, removeFinalizerPatch } from "../kube/finalizer-patches";
import { createMergePatch } from "../kube/merge-patch";
import type { CsiNode } from "../kube/objects/csi-node";
import type { CsiPersistentVolumeSource, PersistentVolume, PersistentVolumeSpec } from "../kube/objects/persistent-volume";
import type { VolumeAttachment } from "../kube/objects/volume-attachment";
import type { Store } from "../kube/store";
import type { Logger } from "../log/logger";
import { errorMessage } from "../util/error-message";
import { finalizerName, nodeIdAnnotation } from "./driver-names";
import type { Handler } from "./handler";
import { nodeIdFor } from "./node-id";
import { volumeCapabilityOf } from "./publish-request";
import { markAsAttached, markAsDetached, saveAttachError, saveDetachError } from "./va-status";
import { cachedPersistentVolume, csiSourceOf, volumeSourceOf } from "./volume-source";

export interface CsiHandlerOptions {
  readonly driverName: string;
  readonly csi: CsiClient;
  readonly api: AttacherApi;
  readonly pvs: Store<PersistentVolume>;
  readonly vas: Store<VolumeAttachment>;
  readonly csiNodes: Store<CsiNode>;
  readonly log: Logger;
  /** --timeout: deadline of each ControllerPublish/Unpublish, in ms. */
  readonly timeoutMs: number;
  /** The driver reports PUBLISH_READONLY; without it readonly is always false (CSI spec). */
  readonly supportsPublishReadonly: boolean;
  readonly supportsSingleNodeMultiWriter: boolean;
  /** --default-fstype. */
  readonly defaultFsType: string;
  /** Wall clock for error timestamps. Default: () => new Date(). */
  readonly now?: () => Date;
}

/**
 * CsiHandler attaches and detaches VAs through the driver's
 * ControllerPublishVolume/ControllerUnpublishVolume, keeping the finalizers,
 * annotation and status the way upstream's csi_handler does.
 */
export class CsiHandler implements Handler {
  private readonly finalizer: string;
  private readonly now: () => Date;
  constructor(private readonly options: CsiHandlerOptions) {
    this.finalizer = finalizerName(options.driverName);
    this.now = options.now ?? (() => new Date());
  }

  async syncVolumeAttachment(va: VolumeAttachment): Promise<void> {
    if (va.metadata.deletionTimestamp) await this.syncDetach(va);
    else await this.syncAttach(va);
  }

  private async syncAttach(va: VolumeAttachment): Promise<void> {
    const log = this.options.log.with({ va: va.metadata.name });
    if (va.status?.attached) {
      log.v(4).info("VolumeAttachment is already attached");
      return;
    }
    log.v(2).info("Attaching");
    // The newest VA the server returned; the status patches are computed
    // against it, as upstream's are against csiAttach's returned VA.
    let latest = va;
    let publishContext: Record<string, string>;
    try {
      publishContext = await this.attach(va, (saved) => {
        latest = saved;
      });
    } catch (e: unknown) {
      await this.saveError(() => saveAttachError(this.options.api, latest, e, this.now()), log);
      throw e;
    }
    log.v(2).info("Attached");
    await markAsAttached(this.options.api, latest, publishContext);
  }

  private async attach(va: VolumeAttachment, onSaved: (saved: VolumeAttachment) => void): Promise<Record<string, string>> {
    const { options } = this;
    // Everything that can fail without side effects is checked before the
    // VA finalizer goes on: a finalizer on a VA that can never attach would
    // only block its deletion.
    let spec: PersistentVolumeSpec;
    const source = volumeSourceOf(va);
    if (source.kind === "pv") {
      let pv = cachedPersistentVolume(options.pvs, source.pvName);
      if (pv.metadata.deletionTimestamp) throw new Error(`PersistentVolume ${JSON.stringify(pv.metadata.name)} is marked for deletion`);
      pv = await this.addPvFinalizer(pv);
      spec = pv.spec;
    } else {
      spec = source.spec;
    }
    const csi = csiSourceOf(spec);
    const volumeCapability = volumeCapabilityOf(spec, csi, {
      singleNodeMultiWriter: options.supportsSingleNodeMultiWriter,
      defaultFsType: options.defaultFsType,
    });
    const secrets = await this.publishSecrets(csi);
    const nodeId = nodeIdFor(options.csiNodes, options.driverName, va.spec.nodeName);

    onSaved(await this.addVaFinalizerAndNodeId(va, nodeId));
    return options.csi.controllerPublish(
      {
        volumeId: csi.volumeHandle,
        nodeId,
        volumeCapability,
        readonly: options.supportsPublishReadonly ? csi.readOnly : false,
        secrets,
        volumeContext: csi.volumeAttributes ?? {},
      },
      options.timeoutMs,
    );
  }

  private async syncDetach(va: VolumeAttachment): Promise<void> {
    const { options } = this;
    const log = options.log.with({ va: va.metadata.name });
    const hasFinalizer = va.metadata.finalizers?.includes(this.finalizer) ?? false;
    if (!hasFinalizer) {
      log.v(4).info("VolumeAttachment is already detached");
      return;
    }
    log.v(2).info("Detaching");
    try {
      const source = volumeSourceOf(va);
      const spec = source.kind === "pv" ? cachedPersistentVolume(options.pvs, source.pvName).spec : source.spec;
      const csi = csiSourceOf(spec);
      const secrets = await this.publishSecrets(csi);
      const nodeId = nodeIdFor(options.csiNodes, options.driverName, va.spec.nodeName, va);
      await options.csi.controllerUnpublish({ volumeId: csi.volumeHandle, nodeId, secrets }, options.timeoutMs);
      log.v(2).info("Detached");
    } catch (e: unknown) {
      await this.saveError(() => saveDetachError(options.api, va, e, this.now()), log);
      throw e;
    }
    await markAsDetached(options.api, va, this.finalizer);
  }

  async syncPersistentVolume(pv: PersistentVolume): Promise<void> {
    const log = this.options.log.with({ pv: pv.metadata.name });
    // A live PV keeps its finalizer; the migrated-PV hand-back comes with CSI migration.
    if (!pv.metadata.deletionTimestamp) return;
    if (!pv.metadata.finalizers?.includes(this.finalizer)) return;
    for (const va of this.options.vas.list()) {
      if (va.spec.source.persistentVolumeName === pv.metadata.name) {
        log.v(4).info("PersistentVolume still used by a VolumeAttachment", { va: va.metadata.name });
        return;
      }
    }
    const patch = removeFinalizerPatch(pv.metadata.finalizers, this.finalizer);
    if (!patch) return;
    await this.options.api.patchPersistentVolume(pv.metadata.name, patch);
    log.v(2).info("Removed finalizer from PersistentVolume");
  }

  private async addPvFinalizer(pv: PersistentVolume): Promise<PersistentVolume> {
    if (pv.metadata.finalizers?.includes(this.finalizer)) return pv;
    try {
      return await this.options.api.patchPersistentVolume(pv.metadata.name, addFinalizerPatch(pv.metadata.finalizers, this.finalizer));
    } catch (e: unknown) {
      throw new Error(`could not add PersistentVolume finalizer: ${errorMessage(e)}`, { cause: e });
    }
  }

  private async addVaFinalizerAndNodeId(va: VolumeAttachment, nodeId: string): Promise<VolumeAttachment> {
    const finalizers = va.metadata.finalizers ?? [];
    const annotations = va.metadata.annotations ?? {};
    const wantsFinalizer = !finalizers.includes(this.finalizer);
    const wantsNodeId = annotations[nodeIdAnnotation] !== nodeId;
    if (!wantsFinalizer && !wantsNodeId) return va;
    // One merge patch for both, computed as the difference, as upstream.
    const patch = createMergePatch(
      { metadata: { finalizers: va.metadata.finalizers ?? undefined, annotations: va.metadata.annotations ?? undefined } },
      {
        metadata: {
          finalizers: wantsFinalizer ? [...finalizers, this.finalizer] : va.metadata.finalizers ?? undefined,
          annotations: { ...annotations, [nodeIdAnnotation]: nodeId },
        },
      },
    );
    try {
      return await this.options.api.patchVolumeAttachment(va.metadata.name, patch);
    } catch (e: unknown) {
      throw new Error(`could not save VolumeAttachment: ${errorMessage(e)}`, { cause: e });
    }
  }

  private async publishSecrets(csi: CsiPersistentVolumeSource): Promise<Record<string, string>> {
    const ref = csi.controllerPublishSecretRef;
    if (!ref) return {};
    try {
      return await this.options.api.secretData(ref.namespace, ref.name);
    } catch (e: unknown) {
      // Names the Secret, never its content.
      throw new Error(`failed to load secret "${ref.namespace}/${ref.name}": ${errorMessage(e)}`, { cause: e });
    }
  }

  private async saveError(save: () => Promise<void>, log: Logger): Promise<void> {
    try {
      await save();
    } catch (e: unknown) {
      // The original error is what gets retried; a failed save is only logged.
      log.v(2).info("Failed to save error to VolumeAttachment", { err: e });
    }
  }
}
