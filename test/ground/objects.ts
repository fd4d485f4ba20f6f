/**
 * Builders for the API objects the end-to-end tests create, and their paths.
 * Plain JSON on purpose: tests write objects the way kubectl users do, not
 * through the attacher's own types.
 */
export const paths = {
  volumeAttachments: "/apis/storage.k8s.io/v1/volumeattachments",
  volumeAttachment: (name: string) => `/apis/storage.k8s.io/v1/volumeattachments/${name}`,
  persistentVolumes: "/api/v1/persistentvolumes",
  persistentVolume: (name: string) => `/api/v1/persistentvolumes/${name}`,
  csiNodes: "/apis/storage.k8s.io/v1/csinodes",
  csiNode: (name: string) => `/apis/storage.k8s.io/v1/csinodes/${name}`,
  secrets: (namespace: string) => `/api/v1/namespaces/${namespace}/secrets`,
};

export interface PersistentVolumeOptions {
  readonly driver: string;
  readonly volumeHandle: string;
  readonly accessModes?: readonly string[];
  readonly fsType?: string;
  readonly readOnly?: boolean;
  readonly volumeMode?: "Filesystem" | "Block";
  readonly mountOptions?: readonly string[];
  readonly volumeAttributes?: Record<string, string>;
  readonly controllerPublishSecretRef?: { name: string; namespace: string };
}

export function persistentVolume(name: string, options: PersistentVolumeOptions) {
  return {
    apiVersion: "v1",
    kind: "PersistentVolume",
    metadata: { name },
    spec: {
      capacity: { storage: "1Gi" },
      accessModes: options.accessModes ?? ["ReadWriteOnce"],
      persistentVolumeReclaimPolicy: "Retain",
      ...(options.volumeMode ? { volumeMode: options.volumeMode } : {}),
      ...(options.mountOptions ? { mountOptions: options.mountOptions } : {}),
      csi: {
        driver: options.driver,
        volumeHandle: options.volumeHandle,
        ...(options.fsType ? { fsType: options.fsType } : {}),
        ...(options.readOnly ? { readOnly: options.readOnly } : {}),
        ...(options.volumeAttributes ? { volumeAttributes: options.volumeAttributes } : {}),
        ...(options.controllerPublishSecretRef ? { controllerPublishSecretRef: options.controllerPublishSecretRef } : {}),
      },
    },
  };
}

export function volumeAttachment(name: string, attacher: string, nodeName: string, pvName: string) {
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "VolumeAttachment",
    metadata: { name },
    spec: { attacher, nodeName, source: { persistentVolumeName: pvName } },
  };
}

export function csiNode(nodeName: string, drivers: readonly { name: string; nodeID: string }[]) {
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "CSINode",
    metadata: { name: nodeName },
    spec: { drivers: drivers.map((driver) => ({ ...driver, topologyKeys: null })) },
  };
}

/** The shape of a VA as the tests read it back. */
export type VolumeAttachmentJson = {
  metadata: { name: string; finalizers?: string[]; annotations?: Record<string, string>; resourceVersion?: string };
  spec: { attacher: string; nodeName: string };
  status?: {
    attached: boolean;
    attachmentMetadata?: Record<string, string>;
    attachError?: { message: string; time: string; errorCode?: number };
    detachError?: { message: string; time: string; errorCode?: number };
  };
};

export type PersistentVolumeJson = {
  metadata: { name: string; finalizers?: string[]; deletionTimestamp?: string };
};

/**
 * isWatchOrderingError says an attach failure's message is one a VA gets
 * only for reaching the attacher before another object's watch event: the
 * `persistentvolume "…" not found` or `csinode.storage.k8s.io "…" not found`
 * of a PV or CSINode created just before it, or the API server's refusal of
 * the PV finalizer ("no new finalizers can be added if the object is being
 * deleted") before the event of the PV's deletion just before it (watches of
 * two kinds are not ordered with each other, upstream's informers' neither).
 * The retry clears it; its AttachFailed Event stays, an Event of its own.
 */
export function isWatchOrderingError(message: string): boolean {
  if (/^(persistentvolume|csinode\.storage\.k8s\.io) ".*" not found$/.test(message)) return true;
  return /^could not add PersistentVolume finalizer: .*no new finalizers can be added if the object is being deleted/.test(message);
}

/**
 * hasSettledAttachError says the VA carries an attachError that is the
 * outcome under test, not a watch-ordering error (isWatchOrderingError).
 * Tests about a missing PV or CSINode wait for that error directly.
 */
export function hasSettledAttachError(va: VolumeAttachmentJson | null | undefined): boolean {
  const message = va?.status?.attachError?.message;
  return message !== undefined && !isWatchOrderingError(message);
}
