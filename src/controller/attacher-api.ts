import type { JsonPatchOperation } from "../kube/finalizer-patches";
import type { KubeClient } from "../kube/http-client";
import { persistentVolumesPath, type PersistentVolume } from "../kube/objects/persistent-volume";
import { volumeAttachmentsPath, type VolumeAttachment } from "../kube/objects/volume-attachment";
import type { Store } from "../kube/store";
import type { CachedObjectParsers } from "./cached-objects";

/** What AttacherApi keeps its answers in: the stores, and the one decision of what they keep. */
export interface AttacherApiCaches {
  readonly vas: Store<VolumeAttachment>;
  readonly pvs: Store<PersistentVolume>;
  readonly parse: Pick<CachedObjectParsers, "volumeAttachment" | "persistentVolume">;
}

/**
 * AttacherApi is every write (and the one uncached read) the attacher makes
 * against the API server, typed: VA patches, PV finalizer patches, Secrets.
 * Reads of VAs, PVs and CSINodes come from the stores instead. The server's
 * answer to a write goes into the store at once (Store.applyOwnWrite), parsed
 * as the watch's copy of it will be, so both are the same object shape; a
 * version the store already holds (its watch event came first) is not parsed
 * again (Store.parseUnlessCached).
 */
export class AttacherApi {
  constructor(
    private readonly client: Pick<KubeClient, "get" | "patch">,
    private readonly caches: AttacherApiCaches,
  ) {}

  /** patchVolumeAttachment sends a JSON merge patch to the VA or its status subresource and returns the server's new VA. */
  async patchVolumeAttachment(name: string, patch: object, subresource?: "status"): Promise<VolumeAttachment> {
    const path = `${volumeAttachmentsPath}/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ""}`;
    const written = this.caches.vas.parseUnlessCached(await this.client.patch<unknown>(path, "merge", patch), this.caches.parse.volumeAttachment);
    this.caches.vas.applyOwnWrite(written);
    return written;
  }

  /** patchPersistentVolume sends a JSON patch (RFC 6902) to the PV and returns the server's new PV. */
  async patchPersistentVolume(name: string, operations: readonly JsonPatchOperation[]): Promise<PersistentVolume> {
    const path = `${persistentVolumesPath}/${encodeURIComponent(name)}`;
    const written = this.caches.pvs.parseUnlessCached(await this.client.patch<unknown>(path, "json", operations), this.caches.parse.persistentVolume);
    this.caches.pvs.applyOwnWrite(written);
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
