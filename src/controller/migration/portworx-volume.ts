import * as v from "valibot";
import { type InTreePlugin, optionalString, parseInTreeSource, requiredString } from "./in-tree-plugin";

/** The CSI driver that replaces the in-tree `kubernetes.io/portworx-volume` plugin. */
export const portworxDriverName = "pxd.portworx.com";

/**
 * PV annotations through which Portworx (with PX-Security) names the secret
 * holding its auth token; csi-translation-lib turns them into the CSI
 * source's secret references (Kubernetes 1.31.6/1.32.2 and later).
 */
export const portworxSecretNameAnnotation = "openstorage.io/auth-secret-name";
export const portworxSecretNamespaceAnnotation = "openstorage.io/auth-secret-namespace";

// The fields of PortworxVolumeSource the translation reads. Its readOnly is
// not carried over to a PV's CSI source by csi-translation-lib.
const portworxVolumeSchema = v.object({
  volumeID: requiredString,
  fsType: optionalString,
});

/**
 * portworxPlugin translates `portworxVolume` to `pxd.portworx.com`: the
 * handle is the Portworx volume ID, and the auth secret named by the PV's
 * annotations (both must be present) becomes the publish secret.
 */
export const portworxPlugin: InTreePlugin = {
  sourceField: "portworxVolume",
  driverName: portworxDriverName,
  translate(volume) {
    const source = parseInTreeSource(volume, "portworxVolume", portworxVolumeSchema);
    const secretName = volume.annotations[portworxSecretNameAnnotation];
    const secretNamespace = volume.annotations[portworxSecretNamespaceAnnotation];
    return {
      csi: {
        driver: portworxDriverName,
        volumeHandle: source.volumeID,
        readOnly: false,
        fsType: source.fsType,
        volumeAttributes: {},
        ...(secretName !== undefined && secretNamespace !== undefined
          ? { controllerPublishSecretRef: { name: secretName, namespace: secretNamespace } }
          : {}),
      },
    };
  },
  repairVolumeHandle: (volumeHandle) => volumeHandle,
};
