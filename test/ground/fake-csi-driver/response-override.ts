// Scripted response overrides: replace whole top-level fields of a normal
// response, given as proto3 JSON, so a test can make a driver answer
// something a correct driver would not (an empty publish context, Probe
// without `ready`) without writing a handler.
import { clone, create, fromJson, type DescField, type DescMessage, type JsonObject, type JsonValue, type Message } from "@bufbuild/protobuf";

/**
 * overrideResponse returns a copy of `response` whose fields named in
 * `override` (by JSON or proto name) are replaced wholesale: a map or list
 * is not merged, and `null` clears the field (unset for a message or
 * wrapper, the zero value for a scalar). Throws on a field the message
 * does not have or a value of the wrong type.
 */
export function overrideResponse(
  schema: DescMessage,
  response: Message,
  override: Readonly<Record<string, JsonValue>>,
): Message {
  const fieldsByName = new Map<string, DescField>();
  for (const field of schema.fields) {
    fieldsByName.set(field.jsonName, field);
    fieldsByName.set(field.name, field);
  }
  const replacements: JsonObject = {};
  const touched: DescField[] = [];
  for (const [key, value] of Object.entries(override)) {
    const field = fieldsByName.get(key);
    if (field === undefined) {
      throw new Error(`${schema.typeName} has no field "${key}"`);
    }
    touched.push(field);
    if (value !== null) {
      replacements[field.jsonName] = value;
    }
  }
  // fromJson checks the values against the schema; fields not in
  // `replacements` come out as their zero values, which is what `null` asks for.
  const patch: Record<string, unknown> = fromJson(schema, replacements);
  const result = clone(schema, response);
  // Messages are plain objects keyed by localName; a oneof lives under the
  // oneof's name as { case, value }.
  const fields: Record<string, unknown> = result;
  for (const field of touched) {
    const key = field.oneof?.localName ?? field.localName;
    fields[key] = patch[key];
  }
  return result;
}

/**
 * checkResponseOverride says what is wrong with an override for a method's
 * response, or returns undefined when it is fine, so a bad script is
 * refused when posted rather than failing the call it was meant for.
 */
export function checkResponseOverride(
  schema: DescMessage,
  override: Readonly<Record<string, JsonValue>>,
): string | undefined {
  try {
    overrideResponse(schema, create(schema), override);
    return undefined;
  } catch (e: unknown) {
    return e instanceof Error ? e.message : String(e);
  }
}
