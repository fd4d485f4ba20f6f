/**
 * JSON patches (RFC 6902) that add or remove one finalizer without
 * clobbering the finalizers other controllers add at the same time. A merge
 * patch would replace the whole list; these either touch one element or
 * `test` the state they were computed from, so a concurrent change makes the
 * API server reject the patch instead of losing someone's finalizer.
 */
export type JsonPatchOperation =
  | { op: "test"; path: string; value: unknown }
  | { op: "add" | "replace"; path: string; value: unknown }
  | { op: "remove"; path: string };

/** addFinalizerPatch adds `finalizer` to an object whose current finalizers are `existing`. */
export function addFinalizerPatch(existing: readonly string[] | null | undefined, finalizer: string): JsonPatchOperation[] {
  if (existing === undefined || existing === null) {
    // The list is absent: create it, unless someone created it meanwhile.
    return [
      { op: "test", path: "/metadata/finalizers", value: null },
      { op: "add", path: "/metadata/finalizers", value: [finalizer] },
    ];
  }
  if (existing.length === 0) {
    return [
      { op: "test", path: "/metadata/finalizers", value: [] },
      { op: "replace", path: "/metadata/finalizers", value: [finalizer] },
    ];
  }
  // Appending never overwrites anything, whatever the list holds by now.
  return [{ op: "add", path: "/metadata/finalizers/-", value: finalizer }];
}

/**
 * removeFinalizerPatch removes `finalizer` by index, testing first that the
 * index still holds it (the list may have shifted since we read it).
 * Returns undefined when the finalizer is not in `existing`.
 */
export function removeFinalizerPatch(existing: readonly string[] | null | undefined, finalizer: string): JsonPatchOperation[] | undefined {
  const index = existing?.indexOf(finalizer) ?? -1;
  if (index < 0) return undefined;
  const path = `/metadata/finalizers/${index}`;
  return [
    { op: "test", path, value: finalizer },
    { op: "remove", path },
  ];
}
