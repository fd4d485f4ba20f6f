import * as v from "valibot";
import { type InTreePlugin, optionalBoolean, optionalString, parseInTreeSource, requiredString } from "./in-tree-plugin";

/** The CSI driver that replaces the in-tree `kubernetes.io/cinder` plugin. */
export const cinderDriverName = "cinder.csi.openstack.org";

// The fields of CinderPersistentVolumeSource the translation reads. Its
// secretRef is not carried over: csi-translation-lib leaves it behind.
const cinderSchema = v.object({
  volumeID: requiredString,
  fsType: optionalString,
  readOnly: optionalBoolean,
});

/** cinderPlugin translates `cinder` to `cinder.csi.openstack.org`: the handle is the Cinder volume ID. */
export const cinderPlugin: InTreePlugin = {
  sourceField: "cinder",
  driverName: cinderDriverName,
  translate(volume) {
    const source = parseInTreeSource(volume, "cinder", cinderSchema);
    return {
      csi: {
        driver: cinderDriverName,
        volumeHandle: source.volumeID,
        readOnly: source.readOnly,
        fsType: source.fsType,
        volumeAttributes: {},
      },
    };
  },
  repairVolumeHandle: (volumeHandle) => volumeHandle,
};
