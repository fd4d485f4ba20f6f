import * as v from "valibot";
import { objectMetaSchema, objectParser } from "./object-meta";

/** Where the API keeps CSINodes (one per node, named after it). */
export const csiNodesPath = "/apis/storage.k8s.io/v1/csinodes";

export const csiNodeSchema = v.object({
  metadata: objectMetaSchema,
  spec: v.object({
    drivers: v.optional(
      v.nullable(
        v.array(
          v.object({
            name: v.string(),
            nodeID: v.string(),
          }),
        ),
      ),
    ),
  }),
});

export type CsiNode = v.InferOutput<typeof csiNodeSchema>;

export const parseCsiNode: (raw: unknown) => CsiNode = objectParser("CSINode", csiNodeSchema);

/** nodeIdOf returns the node ID `driver` registered on this CSINode, if any. */
export function nodeIdOf(csiNode: CsiNode, driver: string): string | undefined {
  return csiNode.spec.drivers?.find((entry) => entry.name === driver)?.nodeID;
}
