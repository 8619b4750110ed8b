/**
 * A bounded cache in two generations of `Map`s: inserts go to the young map; when it holds
 * half the bound it becomes the old map and the previous old map is dropped whole. A hit in the
 * old map moves the entry back to the young one. Entries used within the last half-bound inserts
 * always survive, so it keeps the working set like an LRU, without reordering on every hit or
 * deleting one entry per insert: both showed up in the rewrite's cache-miss profile.
 */
export class BoundedCache<K, V> {
  #young = new Map<K, V>()
  #old = new Map<K, V>()
  readonly #generation: number

  constructor(max: number) {
    this.#generation = Math.max(1, Math.floor(max / 2))
  }

  get(key: K): V | undefined {
    const value = this.#young.get(key)
    if (value !== undefined) return value
    const old = this.#old.get(key)
    if (old !== undefined) {
      this.#old.delete(key)
      this.#insert(key, old)
    }
    return old
  }

  set(key: K, value: V): void {
    this.#old.delete(key)
    this.#insert(key, value)
  }

  #insert(key: K, value: V): void {
    this.#young.set(key, value)
    if (this.#young.size >= this.#generation) {
      this.#old = this.#young
      this.#young = new Map()
    }
  }

  /** Entries held now (at most the bound). */
  get size(): number {
    return this.#young.size + this.#old.size
  }
}
