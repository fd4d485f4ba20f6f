/**
 * The annotation keys the attacher reads and writes, spelled exactly as
 * upstream does: operators' scripts and other controllers match on them.
 */

/** The VA annotation that remembers the node ID used for ControllerPublish, so a node that is gone can still be detached. */
export const nodeIdAnnotation = "csi.alpha.kubernetes.io/node-id";

/** The PV annotation that names the CSI driver an in-tree PV was migrated to. */
export const migratedToAnnotation = "pv.kubernetes.io/migrated-to";
