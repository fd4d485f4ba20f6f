import type { CsiClient, PublishRequest } from "../csi/csi-client";
import type { CsiPersistentVolumeSource } from "../kube/objects/persistent-volume";
import type { VolumeAttachment } from "../kube/objects/volume-attachment";
import { errorMessage } from "../util/error-message";
import type { AttacherApi } from "./attacher-api";
import { resolvePublication, type PublicationLookups, type ResolvedVolume, type VolumeResolution } from "./volume-resolution";

/** The Secret read of the driver calls; AttacherApi in production, a recording fake in unit tests. */
export type SecretReader = Pick<AttacherApi, "secretData">;

export interface PublicationCallsOptions {
  /** ControllerPublishVolume / ControllerUnpublishVolume. */
  readonly csi: CsiClient;
  /** Secrets (never cached). */
  readonly api: SecretReader;
  /** Where a VA's volume and node ID are resolved for an unpublish. */
  readonly lookups: PublicationLookups;
  /** --timeout: deadline of each ControllerPublish/Unpublish, in ms. */
  readonly timeoutMs: number;
}

/**
 * PublicationCalls is the one way the controller talks to the driver about
 * a volume on a node: ControllerPublishVolume and ControllerUnpublishVolume,
 * each with the volume's controllerPublishSecretRef read fresh and bounded
 * by --timeout. Both the attach and detach of a VA and the recovery of a
 * publish no VA names go through it, so every such call carries the same
 * secrets and deadline and is counted under the same metrics.
 */
export class PublicationCalls {
  constructor(private readonly options: PublicationCallsOptions) {}

  /** publish sends ControllerPublishVolume and resolves with the publish context. */
  publish(request: PublishRequest, volume: ResolvedVolume): Promise<Record<string, string>> {
    return this.options.csi.controllerPublish(request, this.options.timeoutMs, { migrated: volume.migrated });
  }

  /**
   * unpublishVa releases a VA's volume from its node: a deleted VA's, or a
   * vanished one's. It falls back to the node ID remembered on the VA, so a
   * node that is gone stays detachable. The PV is only read, never written.
   */
  async unpublishVa(va: VolumeAttachment): Promise<void> {
    const { volume, nodeId: node } = resolvePublication(va, this.options.lookups, { remembered: true });
    const resolved = resolvedOrThrow(volume);
    const secrets = await this.secretsOf(resolved.csi);
    if (!node.ok) throw node.error;
    await this.unpublish(resolved, node.id, secrets);
  }

  /** unpublish sends ControllerUnpublishVolume of `volume` from `nodeId` with secrets already read (see secretsOf). */
  async unpublish(volume: ResolvedVolume, nodeId: string, secrets: Record<string, string>): Promise<void> {
    const request = { volumeId: volume.csi.volumeHandle, nodeId, secrets };
    await this.options.csi.controllerUnpublish(request, this.options.timeoutMs, { migrated: volume.migrated });
  }

  /** secretsOf reads the volume's controllerPublishSecretRef, naming the Secret but never its content in an error. */
  async secretsOf(csi: CsiPersistentVolumeSource): Promise<Record<string, string>> {
    const ref = csi.controllerPublishSecretRef;
    if (!ref) return {};
    try {
      return await this.options.api.secretData(ref.namespace, ref.name);
    } catch (e: unknown) {
      throw new Error(`failed to load secret "${ref.namespace}/${ref.name}": ${errorMessage(e)}`, { cause: e });
    }
  }
}

/**
 * resolvedOrThrow rethrows what a failed resolution step threw, as it was: it
 * becomes the VA's attachError or detachError. An inline spec counts as not
 * migrated here (the migrated label of the publish and unpublish metrics),
 * as upstream's csiAttach and csiDetach count it.
 */
export function resolvedOrThrow(resolution: VolumeResolution): ResolvedVolume {
  if (!resolution.ok) throw resolution.error;
  return resolution.volume;
}
