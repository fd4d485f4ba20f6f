/**
 * What the attacher's caches keep of each VolumeAttachment, PersistentVolume
 * and CSINode: the one place that decides it, for the watch's objects and
 * for the server's answers to our own writes alike.
 *
 * On a shared cluster most PVs and VAs are someone else's (10,000 foreign PVs
 * next to 100 of ours is ordinary), and client-go's informers keep every one
 * of them whole, which is where upstream's memory goes
 * (azuredisk-csi-driver#129). Here:
 * - our VAs and PVs are kept whole, with the values that repeat across them
 *   (driver name, node names, finalizer lists, access modes, the node-ID
 *   annotation) shared through one ValueInterner instead of copied per object;
 * - a foreign PV is kept as a stub (name, resourceVersion, finalizers,
 *   deletionTimestamp), a foreign VA as its name, resourceVersion (so watch
 *   ordering still works), attacher and PV name (a PV's finalizer stays while
 *   any VA names it, whoever attaches it);
 * - a CSINode keeps only our driver's entry.
 */
import { parseCsiNode, type CsiNode } from "../kube/objects/csi-node";
import { parsePersistentVolume, type PersistentVolume } from "../kube/objects/persistent-volume";
import { parseVolumeAttachment, type VolumeAttachment } from "../kube/objects/volume-attachment";
import { ValueInterner } from "../kube/value-interner";
import { inTreePluginOf } from "./migration/in-tree-plugins";
import { carriesOurFinalizer } from "./our-finalizer";

/** CachedObjectParsers turn raw API objects (watch events, list items, write answers) into what the stores keep. */
export interface CachedObjectParsers {
  readonly volumeAttachment: (raw: unknown) => VolumeAttachment;
  readonly persistentVolume: (raw: unknown) => PersistentVolume;
  readonly csiNode: (raw: unknown) => CsiNode;
}

/** cachedObjectParsers returns the parsers for an attacher of `driverName`; they share one interner. */
export function cachedObjectParsers(driverName: string): CachedObjectParsers {
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
    csiNode(raw) {
      const { metadata, spec } = parseCsiNode(raw);
      const drivers = spec.drivers?.filter((entry) => entry.name === driverName) ?? [];
      return { metadata: { name: metadata.name, resourceVersion: metadata.resourceVersion }, spec: { drivers } };
    },
  };
}

/**
 * isOurPersistentVolume: a PV is ours when its CSI source names our driver,
 * when its in-tree source migrates to our driver, or when it carries our
 * finalizer (whatever its source says now, we still owe its removal).
 */
function isOurPersistentVolume(pv: PersistentVolume, driverName: string): boolean {
  if (pv.spec.csi?.driver === driverName) return true;
  if (inTreePluginOf(pv.spec)?.driverName === driverName) return true;
  return carriesOurFinalizer(pv, driverName);
}

/**
 * slimPersistentVolume returns `pv` whole when it is ours, else its name,
 * resourceVersion, finalizers and deletionTimestamp. The finalizers stay: a VA of ours that names a
 * foreign PV makes the handler add our PV finalizer first, as upstream does,
 * and that patch is computed from (and tested against) the cached list. The
 * missing spec then fails that VA with "non-csi source", as upstream does
 * for a PV without a CSI source, instead of publishing another driver's
 * volume handle to ours (which the attach/detach controller never asks for).
 */
function slimPersistentVolume(pv: PersistentVolume, driverName: string): PersistentVolume {
  if (isOurPersistentVolume(pv, driverName)) return pv;
  const { name, resourceVersion, finalizers, deletionTimestamp } = pv.metadata;
  return {
    metadata: { name, resourceVersion, ...(finalizers ? { finalizers } : {}), ...(deletionTimestamp ? { deletionTimestamp } : {}) },
    spec: noSpec,
  };
}

/** One frozen empty spec shared by every foreign PV stub: store objects are never mutated. */
const noSpec: PersistentVolume["spec"] = Object.freeze({});

/** slimVolumeAttachment returns `va` whole when our driver attaches it, else its name, attacher and PV name. */
function slimVolumeAttachment(va: VolumeAttachment, driverName: string): VolumeAttachment {
  if (va.spec.attacher === driverName) return va;
  const persistentVolumeName = va.spec.source.persistentVolumeName;
  return {
    metadata: { name: va.metadata.name, resourceVersion: va.metadata.resourceVersion },
    spec: { attacher: va.spec.attacher, nodeName: "", source: persistentVolumeName ? { persistentVolumeName } : {} },
  };
}
