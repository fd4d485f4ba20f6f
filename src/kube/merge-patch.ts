/**
 * createMergePatch computes the RFC 7386 JSON merge patch that turns
 * `original` into `modified`, as upstream builds its VolumeAttachment patches
 * (evanphx/json-patch CreateMergePatch): changed and new keys carry their new
 * value, removed keys are set to null, arrays are replaced whole, unchanged
 * keys are left out. Writing only the difference keeps our patches from
 * overwriting fields that other writers own.
 */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type JsonObject = { [key: string]: JsonValue };

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function createMergePatch(original: unknown, modified: unknown): JsonObject {
  const before = normalize(original);
  const after = normalize(modified);
  if (!isObject(before) || !isObject(after)) throw new Error("createMergePatch needs two JSON objects");
  return diffObjects(before, after);
}

// Round-trips through JSON so that `undefined` fields count as absent, as
// they are once serialized (Go's omitempty behaves the same for nil).
function normalize(value: unknown): JsonValue {
  return JSON.parse(JSON.stringify(value ?? null)) as JsonValue;
}

function diffObjects(before: JsonObject, after: JsonObject): JsonObject {
  const patch: JsonObject = {};
  for (const [key, value] of Object.entries(after)) {
    const previous = before[key];
    if (!(key in before)) {
      patch[key] = value;
    } else if (isObject(previous) && isObject(value)) {
      const nested = diffObjects(previous, value);
      if (Object.keys(nested).length > 0) patch[key] = nested;
    } else if (!same(previous, value)) {
      patch[key] = value;
    }
  }
  for (const key of Object.keys(before)) {
    if (!(key in after)) patch[key] = null;
  }
  return patch;
}

/** isEmptyPatch: nothing to send. */
export function isEmptyPatch(patch: JsonObject): boolean {
  return Object.keys(patch).length === 0;
}
