/**
 * What the VA and PV reflectors put in the stores: the parse of each raw
 * object, cut down to a stub when it belongs to another driver (see
 * foreign-objects.ts), and otherwise with the values that repeat across our
 * objects (driver name, node names, finalizer lists, access modes, the
 * node-ID annotation) shared through one ValueInterner instead of copied per
 * object.
 */
import { parsePersistentVolume, type PersistentVolume } from "../kube/objects/persistent-volume";
import { parseVolumeAttachment, type VolumeAttachment } from "../kube/objects/volume-attachment";
import { ValueInterner } from "../kube/value-interner";
import { slimPersistentVolume, slimVolumeAttachment } from "./foreign-objects";

/** StoredObjectParsers turn raw API objects into what the stores keep. */
export interface StoredObjectParsers {
  readonly volumeAttachment: (raw: unknown) => VolumeAttachment;
  readonly persistentVolume: (raw: unknown) => PersistentVolume;
}

/** storedObjectParsers returns the parsers for an attacher of `driverName`; they share one interner. */
export function storedObjectParsers(driverName: string): StoredObjectParsers {
  const shared = new ValueInterner();

  // The parsers below replace fields of the object valibot has just built:
  // it is fresh, and no store or handler has seen it yet.
  return {
    volumeAttachment(raw) {
      const va = slimVolumeAttachment(parseVolumeAttachment(raw), driverName);
      if (va.spec.attacher !== driverName) {
        va.spec.attacher = shared.string(va.spec.attacher);
        return va;
      }
      const { metadata, spec } = va;
      if (metadata.finalizers) metadata.finalizers = shared.list(metadata.finalizers);
      if (metadata.annotations) metadata.annotations = shared.map(metadata.annotations);
      spec.attacher = driverName;
      spec.nodeName = shared.string(spec.nodeName);
      return va;
    },
    persistentVolume(raw) {
      const pv = slimPersistentVolume(parsePersistentVolume(raw), driverName);
      const { metadata, spec } = pv;
      if (metadata.finalizers) metadata.finalizers = shared.list(metadata.finalizers);
      if (spec.accessModes) spec.accessModes = shared.list(spec.accessModes);
      if (spec.csi) {
        spec.csi.driver = shared.string(spec.csi.driver);
        spec.csi.fsType = shared.string(spec.csi.fsType);
      }
      return pv;
    },
  };
}
