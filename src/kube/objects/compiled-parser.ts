import type * as v from "valibot";

/** What a compiled parser returns for input its schema rejects: valibot then names what is wrong. */
export const notParsed: unique symbol = Symbol("not parsed");

export type CompiledParser<S extends v.GenericSchema> = (raw: unknown) => v.InferOutput<S> | typeof notParsed;

/**
 * compileParser turns a valibot schema of an API object into one function,
 * generated from the schema, that returns what `v.parse(schema, raw)` returns
 * for input the schema accepts, and `notParsed` for any other.
 *
 * Why: every watch event and every answer to our own writes goes through
 * the cache's parser. valibot runs one shared `~run` per schema kind, with
 * a dataset object per field; under the Baseline JIT the attacher runs
 * with, those shared functions see every object shape there is, so each
 * property access misses its inline cache. The generated code names each
 * field as a constant, so each access sees one shape. valibot stays the one
 * definition of each object (the types derive from it) and the one source
 * of error messages: objectParser asks it again whenever this returns
 * `notParsed`.
 *
 * Only what the API object schemas use compiles: object, string, number,
 * boolean, unknown, optional and nullable (constant defaults), array,
 * record with string keys, and pipes of those with nonEmpty or readonly.
 * Anything else throws when compiled, so a schema can never be half
 * understood. The rules in test/unit/kube/objects/compiled-parser.test.ts
 * hold the generated code to valibot's output, key for key, accepted and
 * rejected input alike.
 */
export function compileParser<S extends v.GenericSchema>(schema: S): CompiledParser<S> {
  const constants: unknown[] = [];
  let names = 0;
  const fresh = (prefix: string) => `${prefix}${names++}`;

  /** constant is an expression for `value`, handed to the generated code rather than written into it. */
  const constant = (value: unknown) => {
    constants.push(value);
    return `constants[${constants.length - 1}]`;
  };

  /**
   * emit returns statements that check `input` (a variable) against `node`
   * and assign the parsed value to `output` (a declared variable), or
   * return notParsed.
   */
  const emit = (node: SchemaNode, input: string, output: string): string => {
    if (node.pipe !== undefined) return emitPipe(node.pipe, input, output);
    switch (node.type) {
      case "string":
        return `if (typeof ${input} !== "string") return notParsed; ${output} = ${input};`;
      case "number":
        // valibot's number refuses NaN.
        return `if (typeof ${input} !== "number" || ${input} !== ${input}) return notParsed; ${output} = ${input};`;
      case "boolean":
        return `if (typeof ${input} !== "boolean") return notParsed; ${output} = ${input};`;
      case "unknown":
        return `${output} = ${input};`;
      case "optional":
      case "nullable":
        return emitWrapper(node, input, output);
      case "object":
        return emitObject(node, input, output);
      case "array": {
        const list = fresh("list");
        const index = fresh("i");
        const item = fresh("item");
        const parsed = fresh("parsed");
        return (
          `if (!Array.isArray(${input})) return notParsed; const ${list} = [];` +
          `for (let ${index} = 0; ${index} < ${input}.length; ${index}++) { const ${item} = ${input}[${index}]; let ${parsed}; ${emit(child(node.item, "array item"), item, parsed)} ${list}.push(${parsed}); }` +
          `${output} = ${list};`
        );
      }
      case "record": {
        const key = child(node.key, "record key");
        if (key.type !== "string" || key.pipe !== undefined) throw new Error(`compileParser: a record's keys must be plain strings, not ${key.type}`);
        const entries = fresh("entries");
        const name = fresh("key");
        const value = fresh("value");
        const parsed = fresh("parsed");
        // valibot skips inherited keys and the three that could reach a prototype.
        return (
          `if (!${input} || typeof ${input} !== "object") return notParsed; const ${entries} = {};` +
          `for (const ${name} in ${input}) { if (!hasOwn.call(${input}, ${name}) || ${name} === "__proto__" || ${name} === "prototype" || ${name} === "constructor") continue;` +
          ` const ${value} = ${input}[${name}]; let ${parsed}; ${emit(child(node.value, "record value"), value, parsed)} ${entries}[${name}] = ${parsed}; }` +
          `${output} = ${entries};`
        );
      }
      default:
        throw new Error(`compileParser: schema type ${node.type} is not supported`);
    }
  };

  const emitPipe = (pipe: readonly SchemaNode[], input: string, output: string): string => {
    const [base, ...actions] = pipe;
    if (base === undefined) throw new Error("compileParser: an empty pipe");
    let code = emit(base, input, output);
    for (const action of actions) {
      if (action.kind === "metadata" || action.type === "readonly") continue;
      if (action.type === "non_empty") code += ` if (${output}.length === 0) return notParsed;`;
      else throw new Error(`compileParser: pipe action ${action.type} is not supported`);
    }
    return code;
  };

  /** An optional's default (or a nullable's) replaces undefined (or null), and then goes through the wrapped schema, as in valibot. */
  const emitWrapper = (node: SchemaNode, input: string, output: string): string => {
    const absent = node.type === "optional" ? "undefined" : "null";
    if (typeof node.default === "function") throw new Error(`compileParser: ${node.type} with a computed default is not supported`);
    const value = fresh("value");
    const fallback = node.default === undefined ? "" : ` if (${value} === ${absent}) ${value} = ${constant(node.default)};`;
    return `let ${value} = ${input};${fallback} if (${value} === ${absent}) ${output} = ${absent}; else { ${emit(child(node.wrapped, node.type), value, output)} }`;
  };

  const emitObject = (node: SchemaNode, input: string, output: string): string => {
    const object = fresh("object");
    let code = `if (!${input} || typeof ${input} !== "object") return notParsed; const ${object} = {};`;
    for (const [key, entry] of Object.entries(node.entries ?? {})) {
      if (entry.fallback !== undefined) throw new Error(`compileParser: ${key}: fallbacks are not supported`);
      const name = JSON.stringify(key);
      const optional = entry.type === "optional" || entry.type === "exact_optional" || entry.type === "nullish";
      const value = fresh("value");
      const parsed = fresh("parsed");
      // As valibot: a key the input lacks is left out, unless its optional has a default.
      const present = `const ${value} = ${input}[${name}]; let ${parsed}; ${emit(entry, value, parsed)} ${object}[${name}] = ${parsed};`;
      if (optional && entry.default !== undefined) code += ` { ${present} }`;
      else if (optional) code += ` if (${name} in ${input}) { ${present} }`;
      else code += ` if (!(${name} in ${input})) return notParsed; { ${present} }`;
    }
    return `${code} ${output} = ${object};`;
  };

  const body = `return function compiledParser(raw) { let result; ${emit(schema as unknown as SchemaNode, "raw", "result")} return result; };`;
  const make = new Function("constants", "notParsed", "hasOwn", body) as (constants: unknown[], marker: typeof notParsed, hasOwn: typeof Object.prototype.hasOwnProperty) => CompiledParser<S>;
  return make(constants, notParsed, Object.prototype.hasOwnProperty);
}

/** The parts of a valibot schema or action object compileParser reads. */
interface SchemaNode {
  readonly kind: string;
  readonly type: string;
  readonly pipe?: readonly SchemaNode[];
  readonly wrapped?: SchemaNode;
  readonly item?: SchemaNode;
  readonly key?: SchemaNode;
  readonly value?: SchemaNode;
  readonly entries?: Readonly<Record<string, SchemaNode>>;
  readonly default?: unknown;
  readonly fallback?: unknown;
}

function child(node: SchemaNode | undefined, what: string): SchemaNode {
  if (node === undefined) throw new Error(`compileParser: ${what} has no schema`);
  return node;
}
