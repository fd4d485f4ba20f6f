/** Options for {@link ValueInterner}. */
export interface ValueInternerOptions {
  /** Distinct values kept per kind (strings, lists, maps); past it new values are returned as given, unshared. Default 10,000. */
  readonly maxEntries?: number;
}

/** resolveValueInternerOptions fills the defaults of every optional field. */
function resolveValueInternerOptions(options: ValueInternerOptions): Required<ValueInternerOptions> {
  return { maxEntries: options.maxEntries ?? 10_000 };
}

/**
 * ValueInterner hands out one shared copy of values that repeat across
 * cached objects: node names, the driver name, finalizer lists, the node-ID
 * annotation. JSON.parse makes a new string (and array, and object) for every
 * occurrence, so 1,000 VAs on four nodes hold 1,000 copies of each node name;
 * through the interner they hold four. Lists and maps come back frozen:
 * cached objects are never mutated, and a shared one must not be.
 *
 * Only low-cardinality values belong here: every distinct value is kept for
 * the life of the process. `maxEntries` bounds that if a caller is wrong.
 */
export class ValueInterner {
  private readonly maxEntries: number;
  private readonly strings = new Map<string, string>();
  private readonly lists = new Map<string, readonly string[]>();
  private readonly maps = new Map<string, Readonly<Record<string, string>>>();

  constructor(options: ValueInternerOptions = {}) {
    this.maxEntries = resolveValueInternerOptions(options).maxEntries;
  }

  /** string returns the shared copy of `value`. */
  string(value: string): string {
    const shared = this.strings.get(value);
    if (shared !== undefined) return shared;
    if (this.strings.size < this.maxEntries) this.strings.set(value, value);
    return value;
  }

  /** list returns a shared, frozen list equal to `values` (same order). */
  list(values: readonly string[]): readonly string[] {
    const key = JSON.stringify(values);
    const shared = this.lists.get(key);
    if (shared !== undefined) return shared;
    const copy = Object.freeze(values.map((value) => this.string(value)));
    if (this.lists.size < this.maxEntries) this.lists.set(key, copy);
    return copy;
  }

  /** map returns a shared, frozen map equal to `entries` (same key order). */
  map(entries: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
    const key = JSON.stringify(entries);
    const shared = this.maps.get(key);
    if (shared !== undefined) return shared;
    const copy: Record<string, string> = {};
    for (const [name, value] of Object.entries(entries)) copy[this.string(name)] = this.string(value);
    Object.freeze(copy);
    if (this.maps.size < this.maxEntries) this.maps.set(key, copy);
    return copy;
  }
}
