import * as v from "valibot";
import { errorMessage } from "../../util/error-message";
import { TranslationError } from "./errors";
import { regionalHandle, regionOfZones, repairGcePdVolumeHandle, unspecified, zonalHandle } from "./gce-pd-volume-handle";
import { type InTreePlugin, type InTreeVolume, optionalBoolean, optionalString, parseInTreeSource, requiredString } from "./in-tree-plugin";

/** The CSI driver that replaces the in-tree `kubernetes.io/gce-pd` plugin. */
export const gcePdDriverName = "pd.csi.storage.gke.io";

/** The zone label of Kubernetes before 1.17, still on PVs created back then; it is read first. */
export const betaZoneLabel = "failure-domain.beta.kubernetes.io/zone";
/** The GA zone label. */
export const zoneLabel = "topology.kubernetes.io/zone";
/** How a zone label lists the zones of a regional disk. */
export const multiZoneDelimiter = "__";

// The fields of GCEPersistentDiskVolumeSource the translation reads.
const gcePersistentDiskSchema = v.object({
  pdName: requiredString,
  fsType: optionalString,
  partition: v.optional(v.pipe(v.number(), v.integer()), 0),
  readOnly: optionalBoolean,
});

/**
 * The handle of a GCE PD PV comes from its zone label: one zone makes a
 * zonal handle, several (`a__b`) a regional one, none a handle with the zone
 * UNSPECIFIED; the project is never known here (see repairGcePdVolumeHandle).
 */
function volumeHandleOf(volume: InTreeVolume, pdName: string): string {
  const zones = (volume.labels[betaZoneLabel] || volume.labels[zoneLabel] || "").split(multiZoneDelimiter);
  const [first] = zones;
  if (zones.length === 1 && first) return zonalHandle(unspecified, first, pdName);
  if (zones.length > 1) {
    let region: string;
    try {
      region = regionOfZones(zones);
    } catch (e: unknown) {
      throw new TranslationError(`failed to get region from zones: ${errorMessage(e)}`, { cause: e });
    }
    return regionalHandle(unspecified, region, pdName);
  }
  return zonalHandle(unspecified, unspecified, pdName);
}

/**
 * backwardCompatibleAccessModes: the in-tree plugin ignored access modes and
 * attached every disk read-write to one node, while the CSI path refuses
 * ReadWriteMany and [ReadWriteOnce, ReadOnlyMany]. csi-translation-lib maps
 * them to what in-tree really did so that old PVs keep attaching.
 */
export function backwardCompatibleAccessModes(modes: readonly string[] | null | undefined): string[] | null | undefined {
  if (modes === null || modes === undefined) return modes;
  const present = new Set(modes.map((mode) => (mode === "ReadWriteMany" ? "ReadWriteOnce" : mode)));
  if (present.has("ReadOnlyMany") && !present.has("ReadWriteOnce")) return ["ReadOnlyMany"];
  return ["ReadWriteOnce"];
}

/** gcePdPlugin translates `gcePersistentDisk` to `pd.csi.storage.gke.io`. */
export const gcePdPlugin: InTreePlugin = {
  sourceField: "gcePersistentDisk",
  driverName: gcePdDriverName,
  translate(volume) {
    const source = parseInTreeSource(volume, "gcePersistentDisk", gcePersistentDiskSchema);
    return {
      csi: {
        driver: gcePdDriverName,
        volumeHandle: volumeHandleOf(volume, source.pdName),
        readOnly: source.readOnly,
        fsType: source.fsType,
        // csi-translation-lib always sets the key; partition 0 (the whole disk) is "".
        volumeAttributes: { partition: source.partition === 0 ? "" : String(source.partition) },
      },
      accessModes: backwardCompatibleAccessModes(volume.spec.accessModes),
    };
  },
  repairVolumeHandle: repairGcePdVolumeHandle,
};
