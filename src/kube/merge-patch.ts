export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type JsonObject = { [key: string]: JsonValue };

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * createMergePatch computes the RFC 7386 JSON merge patch that turns
 * `original` into `modified`, as upstream builds its VolumeAttachment patches
 * (evanphx/json-patch CreateMergePatch): changed and new keys carry their new
 * value, removed keys are set to null, arrays are replaced whole, unchanged
 * keys are left out. Writing only the difference keeps our patches from
 * overwriting fields that other writers own.
 *
 * A field that is `undefined` counts as absent, as it is once serialized
 * (Go's omitempty behaves the same for nil); a value the patch carries
 * keeps its own undefined fields, which its serialization drops. Both
 * objects are walked once, leaves compared by value and arrays by their
 * JSON: a round trip of both through JSON first made the patch a visible
 * share of each VA write's CPU (bench/jit-profile.ts, issue 36).
 */
export function createMergePatch(original: unknown, modified: unknown): JsonObject {
  if (!isObject(original) || !isObject(modified)) throw new Error("createMergePatch needs two JSON objects");
  return diffObjects(original, modified);
}

function diffObjects(before: { readonly [key: string]: unknown }, after: { readonly [key: string]: unknown }): JsonObject {
  const patch: JsonObject = {};
  for (const key of Object.keys(after)) {
    const value = after[key];
    if (value === undefined) continue;
    const previous = before[key];
    if (previous === undefined) {
      patch[key] = value as JsonValue;
    } else if (isObject(previous) && isObject(value)) {
      const nested = diffObjects(previous, value);
      if (Object.keys(nested).length > 0) patch[key] = nested;
    } else if (!sameValue(previous, value)) {
      patch[key] = value as JsonValue;
    }
  }
  for (const key of Object.keys(before)) {
    if (before[key] !== undefined && after[key] === undefined) patch[key] = null;
  }
  return patch;
}

/** sameValue: equal primitives, or objects and arrays that serialize alike. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

/** isEmptyPatch: nothing to send. */
export function isEmptyPatch(patch: JsonObject): boolean {
  return Object.keys(patch).length === 0;
}
