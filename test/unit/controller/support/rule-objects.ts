import type { Call } from "./handler-ground";
import { driverName, finalizer } from "./handler-ground";

/**
 * The objects the CSI handler's rule tests start from, as the API serves
 * them, and the calls they expect, shared by attach-rules, detach-rules,
 * vanished-volume-attachments and pv-finalizers.
 */

export const nodeIdAnnotation = "csi.alpha.kubernetes.io/node-id";

export function vaJson(name: string, extra: { pv?: string; node?: string; metadata?: object; status?: object; inline?: object } = {}) {
  const source = extra.inline ? { inlineVolumeSpec: extra.inline } : { persistentVolumeName: extra.pv ?? "pv1" };
  return {
    metadata: { name, resourceVersion: "1", ...extra.metadata },
    spec: { attacher: driverName, nodeName: extra.node ?? "node1", source },
    status: extra.status ?? { attached: false },
  };
}

export function pvJson(name: string, extra: { metadata?: object; spec?: object; csi?: object } = {}) {
  return {
    metadata: { name, resourceVersion: "1", ...extra.metadata },
    spec: {
      accessModes: ["ReadWriteOnce"],
      csi: { driver: driverName, volumeHandle: `vol-${name}`, ...extra.csi },
      ...extra.spec,
    },
  };
}

export const csiNode1 = { metadata: { name: "node1", resourceVersion: "1" }, spec: { drivers: [{ name: driverName, nodeID: "node1-id" }] } };

export const publishOfPv1: Call = {
  csi: "ControllerPublishVolume",
  request: {
    volumeId: "vol-pv1",
    nodeId: "node1-id",
    volumeCapability: { mount: { fsType: "ext4" }, accessMode: { mode: "SINGLE_NODE_WRITER" } },
  },
};

/** The patch that removes our finalizer from pv1, where it sits at `index`. */
export function removingOurPvFinalizerAt(index: number): Call {
  const path = `/metadata/finalizers/${index}`;
  return { api: "patchPersistentVolume", name: "pv1", patch: [{ op: "test", path, value: finalizer }, { op: "remove", path }] };
}
