import * as v from "valibot";
import { TranslationError } from "./errors";
import { type InTreePlugin, parseInTreeSource, requiredString } from "./in-tree-plugin";

/** The CSI driver that replaces the in-tree `kubernetes.io/azure-disk` plugin. */
export const azureDiskDriverName = "disk.csi.azure.com";

// Volume context keys of the Azure Disk CSI driver. csi-translation-lib
// writes them in lower case since Kubernetes 1.23 (the driver matches keys
// case-insensitively).
const kindKey = "kind";
const cachingModeKey = "cachingmode";
const fsTypeKey = "fstype";
// The only kind the CSI driver supports.
const managed = "Managed";

// The fields of AzureDiskVolumeSource the translation reads. Unlike the
// other plugins, Azure's optional fields are pointers upstream: "absent"
// and "empty" differ, so no defaults here.
const azureDiskSchema = v.object({
  diskURI: requiredString,
  cachingMode: v.optional(v.nullable(v.string())),
  fsType: v.optional(v.nullable(v.string())),
  readOnly: v.optional(v.nullable(v.boolean())),
  kind: v.optional(v.nullable(v.string())),
});

/**
 * azureDiskPlugin translates `azureDisk` to `disk.csi.azure.com`: the handle
 * is the disk URI, the caching mode and fsType travel as volume context, and
 * only managed disks can be migrated.
 */
export const azureDiskPlugin: InTreePlugin = {
  sourceField: "azureDisk",
  driverName: azureDiskDriverName,
  translate(volume) {
    const source = parseInTreeSource(volume, "azureDisk", azureDiskSchema);
    if (typeof source.kind === "string" && source.kind.toLowerCase() !== managed.toLowerCase()) {
      throw new TranslationError(`kind(${source.kind}) is not supported in csi migration`);
    }
    const volumeAttributes: Record<string, string> = {};
    // A caching mode that is set, even to "", is passed on (the PV path of
    // csi-translation-lib; only its inline path skips "").
    if (typeof source.cachingMode === "string") volumeAttributes[cachingModeKey] = source.cachingMode;
    if (typeof source.fsType === "string") volumeAttributes[fsTypeKey] = source.fsType;
    volumeAttributes[kindKey] = managed;
    return {
      csi: {
        driver: azureDiskDriverName,
        volumeHandle: source.diskURI,
        readOnly: source.readOnly ?? false,
        fsType: source.fsType ?? "",
        volumeAttributes,
      },
    };
  },
  repairVolumeHandle: (volumeHandle) => volumeHandle,
};
