/**
 * Builders for what the controller-driven tests create so that
 * kube-controller-manager's attach/detach controller does the rest: Nodes
 * it manages, CSIDrivers, claims pre-bound to a PV, and Pods scheduled by
 * hand. Also the two names that controller derives, so a test can look for
 * exactly the objects it writes.
 */
import { createHash } from "node:crypto";

export const podPaths = {
  nodes: "/api/v1/nodes",
  node: (name: string) => `/api/v1/nodes/${name}`,
  csiDrivers: "/apis/storage.k8s.io/v1/csidrivers",
  claims: (namespace: string) => `/api/v1/namespaces/${namespace}/persistentvolumeclaims`,
  claim: (namespace: string, name: string) => `/api/v1/namespaces/${namespace}/persistentvolumeclaims/${name}`,
  pods: (namespace: string) => `/api/v1/namespaces/${namespace}/pods`,
  pod: (namespace: string, name: string) => `/api/v1/namespaces/${namespace}/pods/${name}`,
  events: (namespace: string) => `/api/v1/namespaces/${namespace}/events`,
};

/**
 * The Node annotation a kubelet started with
 * `--enable-controller-attach-detach` (the default) sets: without it the
 * attach/detach controller leaves the node's volumes to the kubelet.
 */
export const controllerManagedAnnotation = "volumes.kubernetes.io/controller-managed-attach-detach";

/** controllerManagedNode is a Node as a kubelet registers it, minus everything the attach/detach controller does not read. */
export function controllerManagedNode(name: string) {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name, annotations: { [controllerManagedAnnotation]: "true" } },
  };
}

/** attachRequiredCsiDriver is the CSIDriver object that tells the controller this driver's volumes need a VolumeAttachment. */
export function attachRequiredCsiDriver(name: string) {
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "CSIDriver",
    metadata: { name },
    spec: { attachRequired: true, podInfoOnMount: false },
  };
}

/**
 * claimFor is a PVC that asks for the PV `volumeName` by name, so the PV
 * binder binds exactly that pair. The empty class keeps it from waiting
 * for a provisioner.
 */
export function claimFor(name: string, volumeName: string, accessModes: readonly string[] = ["ReadWriteOnce"]) {
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name },
    spec: { accessModes, storageClassName: "", volumeName, resources: { requests: { storage: "1Gi" } } },
  };
}

/** podOnNode is a Pod already scheduled to `nodeName`, using each claim as a volume. Nothing runs it. */
export function podOnNode(name: string, nodeName: string, claimNames: readonly string[]) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: {
      nodeName,
      containers: [{ name: "app", image: "registry.invalid/app:1" }],
      volumes: claimNames.map((claimName, i) => ({ name: `data-${i}`, persistentVolumeClaim: { claimName } })),
    },
  };
}

/** claimingPod is a Pod for the scheduler to place, running `image` (on the node already, never pulled) with the claim mounted at /data. */
export function claimingPod(name: string, image: string, claimName: string) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: {
      containers: [{ name: "app", image, imagePullPolicy: "Never", volumeMounts: [{ name: "data", mountPath: "/data" }] }],
      volumes: [{ name: "data", persistentVolumeClaim: { claimName } }],
    },
  };
}

/**
 * attachmentName is the VolumeAttachment name the attach/detach controller
 * gives a CSI volume on a node: `csi-` + hex SHA-256 of handle, driver and
 * node name, concatenated.
 */
export function attachmentName(volumeHandle: string, driverName: string, nodeName: string): string {
  return `csi-${createHash("sha256").update(`${volumeHandle}${driverName}${nodeName}`).digest("hex")}`;
}

/** attachedVolumeName is how a CSI volume is listed in `node.status.volumesAttached`. */
export function attachedVolumeName(driverName: string, volumeHandle: string): string {
  return `kubernetes.io/csi/${driverName}^${volumeHandle}`;
}

/** The parts of a Node the tests read back. */
export type NodeJson = {
  metadata: { name: string };
  status?: { volumesAttached?: { name: string; devicePath: string }[] };
};

/** volumesAttachedTo lists the volume names a Node's status says are attached to it. */
export function volumesAttachedTo(node: NodeJson | null): string[] {
  return (node?.status?.volumesAttached ?? []).map((volume) => volume.name);
}

/** The parts of a core/v1 Event the tests read back. */
export type EventJson = {
  metadata?: { namespace?: string };
  involvedObject?: { kind?: string; name?: string; namespace?: string; uid?: string };
  reason?: string;
  message?: string;
  type?: string;
  /** How many times the recorder folded the same event into this one. */
  count?: number;
  source?: { component?: string };
};
