/** Simple-protocol statements remembered per generation to find the repeated ones. */
const SEEN_MAX = 256
/** The run of the same simple-protocol statement that prepares it upstream. */
const PREPARE_AT_RUN = 3

/** FNV-1a over UTF-16 code units, as a small integer (no allocation, unlike a digest). */
function textHash(text: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  }
  // 30 bits: a small integer that V8 keeps unboxed in the Set.
  return hash & 0x3fffffff
}

/**
 * How often each recent simple-protocol statement ran, by a hash of its rewritten SQL, to prepare
 * upstream only the ones a connection repeats. Numbers, not the texts: statements with distinct
 * literals come by the thousand, and keeping each text for hundreds of statements would move it
 * to the old generation for the garbage collector's major cycles. A collision only prepares early.
 */
export class RepeatedStatements {
  #seen = new Map<number, number>()
  /** The generation before `#seen`: two generations bound the memory without deletes. */
  #seenBefore = new Map<number, number>()
  #lastSql = ''
  #lastKey = 0

  /**
   * Counts one run of `sql`; true from its third run. A statement that merely recurs by chance
   * (a random key among a few hundred) would cost a Parse and later a Close for one or two runs.
   */
  repeated(sql: string): boolean {
    // The same statement again (often the very same string): its hash is known.
    const key = sql === this.#lastSql ? this.#lastKey : textHash(sql)
    this.#lastSql = sql
    this.#lastKey = key
    const runs = (this.#seen.get(key) ?? this.#seenBefore.get(key) ?? 0) + 1
    // Bounded: one-off statements (distinct literals) come and go, a generation at a time.
    if (this.#seen.size >= SEEN_MAX && !this.#seen.has(key)) {
      this.#seenBefore = this.#seen
      this.#seen = new Map()
    }
    this.#seen.set(key, runs)
    return runs >= PREPARE_AT_RUN
  }
}
