import { create } from "@bufbuild/protobuf";
import { VolumeCapability_AccessMode_Mode as Mode, VolumeCapabilitySchema, type VolumeCapability } from "../../gen/csi/v1/csi_pb";
import type { CsiPersistentVolumeSource, PersistentVolumeSpec } from "../kube/objects/persistent-volume";

export interface VolumeCapabilityOptions {
  /** The driver reports SINGLE_NODE_MULTI_WRITER. */
  readonly singleNodeMultiWriter: boolean;
  /** --default-fstype, used when the PV names no fsType. */
  readonly defaultFsType: string;
}

/**
 * volumeCapabilityOf builds the capability of a ControllerPublish request:
 * block for `volumeMode: Block`, otherwise mount with the PV's fsType (or the
 * default) and mount options; the access mode from the PV's access modes.
 */
export function volumeCapabilityOf(spec: PersistentVolumeSpec, csi: CsiPersistentVolumeSource, options: VolumeCapabilityOptions): VolumeCapability {
  const mode = toCsiAccessMode(spec.accessModes ?? [], options.singleNodeMultiWriter);
  if (spec.volumeMode === "Block") {
    return create(VolumeCapabilitySchema, { accessType: { case: "block", value: {} }, accessMode: { mode } });
  }
  return create(VolumeCapabilitySchema, {
    accessType: {
      case: "mount",
      value: { fsType: csi.fsType || options.defaultFsType, mountFlags: spec.mountOptions ?? [] },
    },
    accessMode: { mode },
  });
}

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
