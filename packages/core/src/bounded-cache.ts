/**
 * A least-recently-used cache on a `Map` (whose iteration order is insertion order): a hit
 * moves the entry to the end, an insert past `max` drops the first. It is used on every query,
 * and measured several times cheaper than a general-purpose LRU library for this one need.
 */
export class BoundedCache<K, V> {
  readonly #entries = new Map<K, V>()
  readonly #max: number

  constructor(max: number) {
    this.#max = max
  }

  get(key: K): V | undefined {
    const value = this.#entries.get(key)
    if (value !== undefined) {
      this.#entries.delete(key)
      this.#entries.set(key, value)
    }
    return value
  }

  set(key: K, value: V): void {
    this.#entries.delete(key)
    this.#entries.set(key, value)
    if (this.#entries.size > this.#max) {
      const oldest = this.#entries.keys().next()
      if (!oldest.done) this.#entries.delete(oldest.value)
    }
  }

  get size(): number {
    return this.#entries.size
  }
}
