import { KubeApiError } from "../kube/errors";
import { nodeIdOf, type CsiNode } from "../kube/objects/csi-node";
import type { VolumeAttachment } from "../kube/objects/volume-attachment";
import { nodeIdAnnotation } from "./driver-names";

/** Where CSINodes are looked up by node name: the CSINode store, or the doctor's snapshot. */
export interface CsiNodeLookup {
  get(nodeName: string): CsiNode | undefined;
}

/**
 * nodeIdFor finds the ID `driver` registered for node `nodeName` in that
 * node's CSINode. With `fallbackVa` (detach only), a missing CSINode or
 * driver entry falls back to the ID remembered on the VA: a node that was
 * deleted, or whose driver pod is down, must still be detachable. Attach
 * never falls back: publishing to a node the driver does not know is wrong.
 */
export function nodeIdFor(csiNodes: CsiNodeLookup, driver: string, nodeName: string, fallbackVa?: VolumeAttachment): string {
  let error: Error;
  const csiNode = csiNodes.get(nodeName);
  if (csiNode) {
    const nodeId = nodeIdOf(csiNode, driver);
    if (nodeId !== undefined) return nodeId;
    error = new Error(`CSINode ${nodeName} does not contain driver ${driver}`);
  } else {
    // The lister's NotFound wording, which operators know from upstream.
    error = new KubeApiError(404, "NotFound", `csinode.storage.k8s.io ${JSON.stringify(nodeName)} not found`);
  }
  const remembered = fallbackVa?.metadata.annotations?.[nodeIdAnnotation];
  if (remembered !== undefined) return remembered;
  throw error;
}
