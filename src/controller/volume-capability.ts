import { create } from "@bufbuild/protobuf";
import { VolumeCapabilitySchema, type VolumeCapability } from "../../gen/csi/v1/csi_pb";
import type { CsiPersistentVolumeSource, PersistentVolumeSpec } from "../kube/objects/persistent-volume";
import { toCsiAccessMode } from "./access-mode";

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
