import { nodeIdOf } from "../kube/objects/csi-node";
import type { VolumeAttachment } from "../kube/objects/volume-attachment";
import { nodeIdAnnotation } from "./driver-names";
import type { CsiNodeLookup } from "./publication-resolution";

/**
 * The rules for a publish no VA of ours names any more (its VA vanished in
 * kube-apiserver's delete race, kubernetes#77988, while no replica watched):
 * which node IDs the recovery may unpublish a volume from. Pure: the CSI
 * handler and the reconciler pass them what their caches and the driver say.
 */

/**
 * nodeIdsNamedBy answers which node IDs the VAs of ours that name one volume
 * stand for: each VA's node ID in its node's CSINode and the one remembered
 * in its annotation (both, when they differ: the volume may be published
 * under either, and neither may be taken from the VA). Undefined when a
 * VA's node ID cannot be told at all: then any node may be its, and
 * nothing of that volume may be recovered.
 */
export function nodeIdsNamedBy(vas: Iterable<VolumeAttachment>, csiNodes: CsiNodeLookup, driverName: string): Set<string> | undefined {
  const named = new Set<string>();
  for (const va of vas) {
    const csiNode = csiNodes.get(va.spec.nodeName);
    const registered = csiNode === undefined ? undefined : nodeIdOf(csiNode, driverName);
    const remembered = va.metadata.annotations?.[nodeIdAnnotation];
    if (registered === undefined && remembered === undefined) return undefined;
    if (registered !== undefined) named.add(registered);
    if (remembered !== undefined) named.add(remembered);
  }
  return named;
}

/**
 * unnamedNodeIds is the recovery's targets: the `candidates` (node IDs the
 * volume is, or may be, published on) that no VA of ours names, each once,
 * sorted; none when `named` is undefined (a VA of ours whose node cannot be
 * told names the volume).
 */
export function unnamedNodeIds(candidates: Iterable<string>, named: ReadonlySet<string> | undefined): string[] {
  if (named === undefined) return [];
  return [...new Set(candidates)].filter((nodeId) => !named.has(nodeId)).sort();
}
