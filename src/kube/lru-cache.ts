/**
 * LruCache is a map bounded to `capacity` entries that forgets the least
 * recently used one when full, like the golang groupcache lru.Cache that
 * client-go's event correlator keeps its state in: a process emitting events
 * about ever new objects must not grow without bound.
 */
export class LruCache<K, V> {
  /** Map iteration order is insertion order: the first key is the least recently used. */
  private readonly entries = new Map<K, V>();

  constructor(private readonly capacity: number) {}

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    // Re-insert to mark it most recently used.
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
