import type { KubeClient } from "./http-client";
import type { Store } from "./store";
import type { JsonPatchOperation } from "./finalizer-patches";
import { parsePersistentVolume, persistentVolumesPath, type PersistentVolume } from "./objects/persistent-volume";
import { parseVolumeAttachment, volumeAttachmentsPath, type VolumeAttachment } from "./objects/volume-attachment";

/**
 * AttacherApi is every write (and the one uncached read) the attacher makes
 * against the API server, typed: VA patches, PV finalizer patches, Secrets.
 * Reads of VAs, PVs and CSINodes come from the stores instead.
 */
export class AttacherApi {
  /**
   * @param vas, pvs  the caches our writes are applied to (see Store.applyOwnWrite).
   */
  constructor(
    private readonly client: KubeClient,
    private readonly vas: Store<VolumeAttachment>,
    private readonly pvs: Store<PersistentVolume>,
  ) {}

  /** patchVolumeAttachment sends a JSON merge patch to the VA or its status subresource and returns the server's new VA. */
  async patchVolumeAttachment(name: string, patch: object, subresource?: "status"): Promise<VolumeAttachment> {
    const path = `${volumeAttachmentsPath}/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ""}`;
    const written = parseVolumeAttachment(await this.client.patch<unknown>(path, "merge", patch));
    this.vas.applyOwnWrite(written);
    return written;
  }

  /** patchPersistentVolume sends a JSON patch (RFC 6902) to the PV and returns the server's new PV. */
  async patchPersistentVolume(name: string, operations: readonly JsonPatchOperation[]): Promise<PersistentVolume> {
    const path = `${persistentVolumesPath}/${encodeURIComponent(name)}`;
    const written = parsePersistentVolume(await this.client.patch<unknown>(path, "json", operations));
    this.pvs.applyOwnWrite(written);
    return written;
  }

  /**
   * secretData reads a Secret and returns its data decoded to strings, as
   * CSI wants them. Secrets are never cached: the attacher holds them only
   * for the duration of one call.
   */
  async secretData(namespace: string, name: string): Promise<Record<string, string>> {
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(name)}`;
    const secret = await this.client.get<{ data?: Record<string, string> | null }>(path);
    const decoded: Record<string, string> = {};
    for (const [key, value] of Object.entries(secret.data ?? {})) {
      decoded[key] = Buffer.from(value, "base64").toString("utf8");
    }
    return decoded;
  }
}
