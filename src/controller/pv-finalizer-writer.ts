import { addFinalizerPatch, removeFinalizerPatch } from "../kube/finalizer-patches";
import type { PersistentVolume } from "../kube/objects/persistent-volume";
import { errorMessage } from "../util/error-message";
import type { AttacherApi } from "./attacher-api";
import { finalizerName } from "./driver-names";
import { carriesOurFinalizer } from "./our-finalizer";

/** The one API call the writer makes; AttacherApi in production, a recording fake in unit tests. */
export type PersistentVolumePatcher = Pick<AttacherApi, "patchPersistentVolume">;

export interface PersistentVolumeFinalizerWriterOptions {
  /** Sends the patches (and puts the server's answer into the PV cache). */
  readonly api: PersistentVolumePatcher;
  /** The CSI driver's name; the finalizer is derived from it, as the VA writer's is. */
  readonly driverName: string;
}

/**
 * PersistentVolumeFinalizerWriter is the one owner of the attacher's writes
 * to PVs: our finalizer goes on before a volume is published and comes off
 * once no VA needs the PV. Both are RFC 6902 JSON patches that touch one
 * element or `test` the list they were computed from (finalizer-patches.ts),
 * so a concurrent change by another controller makes the server refuse the
 * patch instead of losing that controller's finalizer.
 */
export class PersistentVolumeFinalizerWriter {
  private readonly api: PersistentVolumePatcher;
  private readonly driverName: string;
  private readonly finalizer: string;

  constructor(options: PersistentVolumeFinalizerWriterOptions) {
    this.api = options.api;
    this.driverName = options.driverName;
    this.finalizer = finalizerName(options.driverName);
  }

  /**
   * ensureFinalizer adds our finalizer unless the PV has it, and returns the
   * PV to go on with (the server's answer, or `pv` when nothing was sent).
   */
  async ensureFinalizer(pv: PersistentVolume): Promise<PersistentVolume> {
    if (carriesOurFinalizer(pv, this.driverName)) return pv;
    try {
      return await this.api.patchPersistentVolume(pv.metadata.name, addFinalizerPatch(pv.metadata.finalizers, this.finalizer));
    } catch (e: unknown) {
      throw new Error(`could not add PersistentVolume finalizer: ${errorMessage(e)}`, { cause: e });
    }
  }

  /** removeFinalizer removes exactly our finalizer, testing its index first; no request when the PV lacks it. Resolves true when it sent one. */
  async removeFinalizer(pv: PersistentVolume): Promise<boolean> {
    const patch = removeFinalizerPatch(pv.metadata.finalizers, this.finalizer);
    if (!patch) return false;
    await this.api.patchPersistentVolume(pv.metadata.name, patch);
    return true;
  }
}
