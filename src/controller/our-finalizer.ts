import type { KubeObject } from "../kube/objects/object-meta";
import { finalizerName } from "./driver-names";

/**
 * carriesOurFinalizer answers "does this VA or PV carry the finalizer the
 * attacher of `driverName` puts on?": while it does, we may still owe a
 * detach (VA) or the finalizer's removal (PV). The caches, the event
 * filters, the vanished-VA check and both writers ask it here, so the
 * question has one answer.
 */
export function carriesOurFinalizer(object: KubeObject, driverName: string): boolean {
  return object.metadata.finalizers?.includes(finalizerName(driverName)) === true;
}
