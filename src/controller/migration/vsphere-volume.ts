import * as v from "valibot";
import { type InTreePlugin, optionalString, parseInTreeSource, requiredString } from "./in-tree-plugin";

/** The CSI driver that replaces the in-tree `kubernetes.io/vsphere-volume` plugin. */
export const vsphereDriverName = "csi.vsphere.vmware.com";

// The volume context key that carries the SPBM storage policy.
const storagePolicyNameKey = "storagepolicyname";

// The fields of VsphereVirtualDiskVolumeSource the translation reads; it has
// no readOnly.
const vsphereVolumeSchema = v.object({
  volumePath: requiredString,
  fsType: optionalString,
  storagePolicyName: optionalString,
});

/**
 * vspherePlugin translates `vsphereVolume` to `csi.vsphere.vmware.com`. The
 * handle is the in-tree volume path verbatim, `[datastore] folder/disk.vmdk`
 * with its space and brackets: the vSphere CSI driver recognizes a migrated
 * volume by that form and looks its FCD ID up itself.
 */
export const vspherePlugin: InTreePlugin = {
  sourceField: "vsphereVolume",
  driverName: vsphereDriverName,
  translate(volume) {
    const source = parseInTreeSource(volume, "vsphereVolume", vsphereVolumeSchema);
    const volumeAttributes: Record<string, string> = {};
    if (source.storagePolicyName !== "") volumeAttributes[storagePolicyNameKey] = source.storagePolicyName;
    return {
      csi: {
        driver: vsphereDriverName,
        volumeHandle: source.volumePath,
        readOnly: false,
        fsType: source.fsType,
        volumeAttributes,
      },
    };
  },
  repairVolumeHandle: (volumeHandle) => volumeHandle,
};
