import * as v from "valibot";
import { ObjectSchemaError } from "../errors";
import { compileParser, notParsed, type CompiledParser } from "./compiled-parser";

/**
 * The slice of metav1.ObjectMeta the attacher reads. valibot's `object`
 * drops every key not listed, so the stores keep only these fields: that is
 * what keeps memory flat on clusters with thousands of volumes.
 */
export const objectMetaSchema = v.object({
  name: v.pipe(v.string(), v.nonEmpty("metadata.name is empty")),
  namespace: v.optional(v.string()),
  uid: v.optional(v.string()),
  resourceVersion: v.optional(v.string(), ""),
  deletionTimestamp: v.optional(v.nullable(v.string())),
  finalizers: v.optional(v.nullable(v.pipe(v.array(v.string()), v.readonly()))),
  annotations: v.optional(v.nullable(v.pipe(v.record(v.string(), v.string()), v.readonly()))),
});

export type ObjectMeta = v.InferOutput<typeof objectMetaSchema>;

/** An object the stores can keep: anything with slim metadata. */
export interface KubeObject {
  readonly metadata: ObjectMeta;
}

/**
 * objectParser returns the parser of one kind of API object: it validates
 * `raw` against `schema` and returns the slim object, or throws an
 * ObjectSchemaError naming the kind, the object and the path of the first
 * bad field. The schema's compiled parser (compiled-parser.ts), made at the
 * first call, does the work; valibot itself runs only for input that parser
 * refuses, to say what is wrong with it.
 */
export function objectParser<S extends v.GenericSchema>(kind: string, schema: S): (raw: unknown) => v.InferOutput<S> {
  let compiled: CompiledParser<S> | undefined;
  return (raw) => {
    compiled ??= compileParser(schema);
    const parsed = compiled(raw);
    if (parsed !== notParsed) return parsed;
    const result = v.safeParse(schema, raw);
    // The compiled parser and valibot agree (the rules hold them to it); should they not, valibot's answer stands.
    if (result.success) return result.output;
    const name = (raw as { metadata?: { name?: unknown } } | null)?.metadata?.name;
    const issue = result.issues[0];
    const path = issue ? v.getDotPath(issue) : null;
    throw new ObjectSchemaError(kind, typeof name === "string" ? name : "<unnamed>", `${path ?? "object"}: ${issue?.message ?? "invalid"}`);
  };
}
