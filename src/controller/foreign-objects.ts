/**
 * What the attacher keeps of objects that belong to other drivers. On a
 * shared cluster most PVs and VAs are someone else's (10,000 foreign PVs next
 * to 100 of ours is ordinary), and client-go's informers keep every one of
 * them whole, which is where upstream's memory goes (azuredisk-csi-driver#129).
 * The stores keep ours whole and a stub of each foreign one: a PV's name,
 * resourceVersion, finalizers and deletionTimestamp, a VA's name, resourceVersion (so watch ordering still
 * works), attacher and PV name (a PV's finalizer stays while any VA names
 * it, whoever attaches it).
 */
import type { PersistentVolume } from "../kube/objects/persistent-volume";
import type { VolumeAttachment } from "../kube/objects/volume-attachment";
import { finalizerName } from "./driver-names";
import { inTreePluginOf } from "./migration/in-tree-plugins";

/**
 * isOurPersistentVolume: a PV is ours when its CSI source names our driver,
 * when its in-tree source migrates to our driver, or when it carries our
 * finalizer (whatever its source says now, we still owe its removal).
 */
export function isOurPersistentVolume(pv: PersistentVolume, driverName: string): boolean {
  if (pv.spec.csi?.driver === driverName) return true;
  if (inTreePluginOf(pv.spec)?.driverName === driverName) return true;
  return pv.metadata.finalizers?.includes(finalizerName(driverName)) === true;
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
export function slimPersistentVolume(pv: PersistentVolume, driverName: string): PersistentVolume {
  if (isOurPersistentVolume(pv, driverName)) return pv;
  return foreignPersistentVolumeStub(pv.metadata);
}

/** The metadata a foreign PV's stub keeps. */
export type ForeignPersistentVolumeMeta = Pick<PersistentVolume["metadata"], "name" | "resourceVersion" | "finalizers" | "deletionTimestamp">;

/** foreignPersistentVolumeStub is the stub kept of a PV that is not ours: its name, resourceVersion, finalizers and deletionTimestamp. */
export function foreignPersistentVolumeStub(metadata: ForeignPersistentVolumeMeta): PersistentVolume {
  const { name, resourceVersion, finalizers, deletionTimestamp } = metadata;
  return {
    metadata: { name, resourceVersion, ...(finalizers ? { finalizers } : {}), ...(deletionTimestamp ? { deletionTimestamp } : {}) },
    spec: noSpec,
  };
}

/** One frozen empty spec shared by every foreign PV stub: store objects are never mutated. */
const noSpec: PersistentVolume["spec"] = Object.freeze({});

/** slimVolumeAttachment returns `va` whole when our driver attaches it, else its name, attacher and PV name. */
export function slimVolumeAttachment(va: VolumeAttachment, driverName: string): VolumeAttachment {
  if (va.spec.attacher === driverName) return va;
  const persistentVolumeName = va.spec.source.persistentVolumeName;
  return {
    metadata: { name: va.metadata.name, resourceVersion: va.metadata.resourceVersion },
    spec: { attacher: va.spec.attacher, nodeName: "", source: persistentVolumeName ? { persistentVolumeName } : {} },
  };
}
