import { VolumeCapability_AccessMode_Mode as Mode } from "../../gen/csi/v1/csi_pb";

/**
 * toCsiAccessMode maps a PV's Kubernetes access modes to the one CSI access
 * mode of its ControllerPublish request, as csi-lib-utils' accessmodes does
 * (same decisions, same error wording). Drivers with SINGLE_NODE_MULTI_WRITER
 * get the finer single-node modes.
 */
export function toCsiAccessMode(accessModes: readonly string[], singleNodeMultiWriter: boolean): Mode {
  // Duplicates carry no meaning: [RWOP, RWOP] is RWOP alone.
  const modes = new Set(accessModes);
  if (modes.has("ReadWriteOncePod")) {
    if (modes.size > 1) {
      throw new Error("Kubernetes does not support use of ReadWriteOncePod with other access modes on the same PersistentVolume");
    }
    return singleNodeMultiWriter ? Mode.SINGLE_NODE_SINGLE_WRITER : Mode.SINGLE_NODE_WRITER;
  }
  if (modes.has("ReadWriteMany")) return Mode.MULTI_NODE_MULTI_WRITER;
  if (modes.has("ReadOnlyMany") && modes.has("ReadWriteOnce")) {
    throw new Error("CSI does not support ReadOnlyMany and ReadWriteOnce on the same PersistentVolume");
  }
  if (modes.has("ReadOnlyMany")) return Mode.MULTI_NODE_READER_ONLY;
  if (modes.has("ReadWriteOnce")) return singleNodeMultiWriter ? Mode.SINGLE_NODE_MULTI_WRITER : Mode.SINGLE_NODE_WRITER;
  // Go prints the slice with %+v: [ReadWriteOnce ReadOnlyMany].
  throw new Error(`unsupported AccessMode combination: [${accessModes.join(" ")}]`);
}
