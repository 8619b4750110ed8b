import { createHash } from 'node:crypto'

/**
 * The prepared statements one connection keeps on its upstream session, shared by every client
 * statement with the same rewritten SQL and parameter types. A driver that sends the same query
 * as a fresh unnamed statement each time (node-postgres, psycopg, most ORMs) then costs the
 * upstream one Parse per distinct query instead of one per execution, and PostgreSQL's plan
 * cache serves the rewritten (larger) query without planning it again. The SQL text is the
 * rewrite for the session at the time, so a policy change that alters it makes a new statement.
 */
export class UpstreamStatements {
  /** Key → upstream name; iteration order is least recently used first. */
  readonly #byKey = new Map<string, string>()
  readonly #prefix: string
  readonly #max: number
  #counter = 0
  #lastSql = ''
  #lastTypes = ''
  #lastKey = ''

  /** Statements named after their content (shared by the clients of a transaction pool). */
  readonly #byContent: boolean

  /**
   * `prefix` starts the names of this connection's statements; with `byContent`, names are a
   * digest of the statement instead, equal for equal statements of any connection.
   */
  constructor(prefix: string, options: { max?: number; byContent?: boolean } = {}) {
    this.#prefix = prefix
    this.#max = options.max ?? 256
    this.#byContent = options.byContent ?? false
  }

  /** The upstream statement for `sql` and `types`; `prepare` when a Parse must be sent for it. */
  acquire(sql: string, types: readonly number[]): { name: string; prepare: boolean } {
    // Without parameter types (what most drivers send) the SQL itself is the key: the rewrite
    // cache hands out the same string each time, so V8 hashes it once, not per execution.
    // SQL never contains NUL, so typed keys cannot collide with untyped ones.
    const key = types.length === 0 ? sql : this.#typedKey(sql, types)
    const cached = this.#byKey.get(key)
    if (cached !== undefined) {
      this.#byKey.delete(key)
      this.#byKey.set(key, cached)
      return { name: cached, prepare: false }
    }
    const name = this.#byContent
      ? `palisade_${createHash('sha256').update(key).digest('base64url').slice(0, 32)}`
      : `${this.#prefix}${++this.#counter}`
    this.#byKey.set(key, name)
    return { name, prepare: true }
  }

  /** The key of a typed statement; the last one is kept, as a connection repeats its statement. */
  #typedKey(sql: string, types: readonly number[]): string {
    const typeList = types.join(',')
    if (sql !== this.#lastSql || typeList !== this.#lastTypes) {
      this.#lastSql = sql
      this.#lastTypes = typeList
      this.#lastKey = `${typeList}\u0000${sql}`
    }
    return this.#lastKey
  }

  /** The upstream refused the Parse of `name`: it does not exist, so it is not reused. */
  forget(name: string): void {
    for (const [key, value] of this.#byKey) {
      if (value === name) {
        this.#byKey.delete(key)
        return
      }
    }
  }

  /**
   * Drops the least recently used statements beyond the bound that no client statement uses;
   * returns their names, to be closed upstream.
   */
  evict(inUse: (name: string) => boolean): string[] {
    const closed: string[] = []
    for (const [key, name] of this.#byKey) {
      if (this.#byKey.size <= this.#max) break
      if (inUse(name)) continue
      this.#byKey.delete(key)
      closed.push(name)
    }
    return closed
  }

  /** Every upstream statement held (closed when the connection ends). */
  get names(): string[] {
    return [...this.#byKey.values()]
  }

  /** Forgets every statement (the caller closes them upstream). */
  clear(): void {
    this.#byKey.clear()
  }
}
