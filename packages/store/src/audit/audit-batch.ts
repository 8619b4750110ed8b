import { uuidv7 } from '../kernel/ids.js'
import { MAX_CHUNK_ENTRIES, STATUS_CODES } from './audit-chunk-format.js'
import type { QueryAuditRecord } from './query-audit-writer.js'

/**
 * A batch of query-audit entries as the serving thread hands it to the writer's thread: columns
 * of numbers and a few string lists, so passing it to another thread copies flat arrays rather
 * than an object per entry, and repeated texts (the same statement, the same policies) travel
 * once per batch. Nothing is hashed or encoded here (audit-ingest.ts does that).
 */
export interface AuditBatch {
  /** The batch's id (a UUIDv7): the stored row's key, the same on every attempt to store it. */
  seed: string
  n: number
  /** Milliseconds since the epoch. */
  at: Float64Array
  /** 0-based into `principals`, five strings per principal. */
  principal: Uint16Array
  /** user id, username, datasource id, datasource name, client info (null: none). */
  principals: (string | null)[]
  strings: string[]
  /** Index into `strings`, -1 for null. */
  original: Int32Array
  rewritten: Int32Array
  policies: Int32Array
  error: Int32Array
  shadow: Int32Array
  /** Literals of a templated statement: how many (-1: not templated), the values in `literals`. */
  literalCount: Int16Array
  literals: string[]
  /** -1 for null. */
  elapsed: Int32Array
  status: Uint8Array
  /** -1 null, 0 false, 1 true. */
  shadowDenied: Int8Array
}

/** JSON of each `policies_applied` array the writer has seen: rewrites share theirs. */
const policiesJson = new WeakMap<object, string>()

function jsonOf(value: string | readonly unknown[] | null | undefined): string | null {
  if (value === null || value === undefined) return null
  if (typeof value === 'string') return value
  let json = policiesJson.get(value)
  if (json === undefined) {
    json = JSON.stringify(value)
    policiesJson.set(value, json)
  }
  return json
}

/** Fills one batch record by record on the serving thread; `take` hands it over. */
export class AuditBatchBuilder {
  readonly #capacity: number
  #n = 0
  #at: Float64Array
  #principal: Uint16Array
  #principals: (string | null)[] = []
  /** Principal indexes by user id, to find a principal without building a key string. */
  #byUser = new Map<string, number[]>()
  #strings: string[] = []
  #stringIndex = new Map<string, number>()
  #original: Int32Array
  #rewritten: Int32Array
  #policies: Int32Array
  #error: Int32Array
  #shadow: Int32Array
  #literalCount: Int16Array
  #literals: string[] = []
  #elapsed: Int32Array
  #status: Uint8Array
  #shadowDenied: Int8Array

  constructor(capacity: number) {
    this.#capacity = Math.max(1, Math.min(capacity, MAX_CHUNK_ENTRIES))
    const c = this.#capacity
    this.#at = new Float64Array(c)
    this.#principal = new Uint16Array(c)
    this.#original = new Int32Array(c)
    this.#rewritten = new Int32Array(c)
    this.#policies = new Int32Array(c)
    this.#error = new Int32Array(c)
    this.#shadow = new Int32Array(c)
    this.#literalCount = new Int16Array(c)
    this.#elapsed = new Int32Array(c)
    this.#status = new Uint8Array(c)
    this.#shadowDenied = new Int8Array(c)
  }

  get size(): number {
    return this.#n
  }

  get full(): boolean {
    return this.#n >= this.#capacity
  }

  #string(value: string | null | undefined): number {
    if (value === null || value === undefined) return -1
    let index = this.#stringIndex.get(value)
    if (index === undefined) {
      index = this.#strings.length
      this.#strings.push(value)
      this.#stringIndex.set(value, index)
    }
    return index
  }

  #principalOf(record: QueryAuditRecord): number {
    const clientInfo = record.client_info ?? null
    const known = this.#byUser.get(record.user_id)
    const all = this.#principals
    if (known) {
      for (const p of known) {
        const at = p * 5
        if (
          all[at + 1] === record.username &&
          all[at + 2] === record.data_source_id &&
          all[at + 3] === record.datasource_name &&
          all[at + 4] === clientInfo
        ) {
          return p
        }
      }
    }
    const p = all.length / 5
    all.push(
      record.user_id,
      record.username,
      record.data_source_id,
      record.datasource_name,
      clientInfo,
    )
    if (known) known.push(p)
    else this.#byUser.set(record.user_id, [p])
    return p
  }

  /** Adds one record; the caller takes the batch once it is full. */
  add(record: QueryAuditRecord): void {
    const i = this.#n++
    this.#at[i] = record.created_at ? record.created_at.getTime() : Date.now()
    this.#principal[i] = this.#principalOf(record)
    const template = record.template
    if (template) {
      this.#original[i] = this.#string(template.originalSql)
      this.#rewritten[i] = this.#string(template.sql)
      this.#literalCount[i] = template.literals.length
      for (const literal of template.literals) this.#literals.push(literal)
    } else {
      this.#original[i] = this.#string(record.original_query)
      this.#rewritten[i] = this.#string(record.rewritten_query)
      this.#literalCount[i] = -1
    }
    this.#policies[i] = this.#string(jsonOf(record.policies_applied) ?? '[]')
    this.#error[i] = this.#string(record.error_message)
    this.#shadow[i] = this.#string(jsonOf(record.shadow_policies))
    const time = record.execution_time_ms
    this.#elapsed[i] =
      time === null || time === undefined || !Number.isFinite(time)
        ? -1
        : Math.min(2_147_483_647, Math.max(0, Math.round(time)))
    this.#status[i] = STATUS_CODES[record.status] ?? STATUS_CODES.error
    const denied = record.shadow_denied
    this.#shadowDenied[i] = denied === null || denied === undefined ? -1 : denied ? 1 : 0
  }

  /** The batch so far (null when empty); the builder starts a new one. */
  take(): AuditBatch | null {
    const n = this.#n
    if (n === 0) return null
    const batch: AuditBatch = {
      seed: uuidv7(),
      n,
      at: this.#at.slice(0, n),
      principal: this.#principal.slice(0, n),
      principals: this.#principals,
      strings: this.#strings,
      original: this.#original.slice(0, n),
      rewritten: this.#rewritten.slice(0, n),
      policies: this.#policies.slice(0, n),
      error: this.#error.slice(0, n),
      shadow: this.#shadow.slice(0, n),
      literalCount: this.#literalCount.slice(0, n),
      literals: this.#literals,
      elapsed: this.#elapsed.slice(0, n),
      status: this.#status.slice(0, n),
      shadowDenied: this.#shadowDenied.slice(0, n),
    }
    this.#n = 0
    this.#principals = []
    this.#byUser = new Map()
    this.#strings = []
    this.#stringIndex = new Map()
    this.#literals = []
    return batch
  }
}

/** The entries of `batch` one by one, each as a batch of its own (a batch the store refused). */
export function splitBatch(batch: AuditBatch): AuditBatch[] {
  const out: AuditBatch[] = []
  let literalAt = 0
  for (let i = 0; i < batch.n; i++) {
    const count = batch.literalCount[i] as number
    const literals = count > 0 ? batch.literals.slice(literalAt, literalAt + count) : []
    if (count > 0) literalAt += count
    const p = batch.principal[i] as number
    const strings: string[] = []
    const pick = (index: number) => {
      if (index < 0) return -1
      strings.push(batch.strings[index] as string)
      return strings.length - 1
    }
    out.push({
      seed: uuidv7(),
      n: 1,
      at: Float64Array.of(batch.at[i] as number),
      principal: Uint16Array.of(0),
      principals: batch.principals.slice(p * 5, p * 5 + 5),
      original: Int32Array.of(pick(batch.original[i] as number)),
      rewritten: Int32Array.of(pick(batch.rewritten[i] as number)),
      policies: Int32Array.of(pick(batch.policies[i] as number)),
      error: Int32Array.of(pick(batch.error[i] as number)),
      shadow: Int32Array.of(pick(batch.shadow[i] as number)),
      strings,
      literalCount: Int16Array.of(count),
      literals,
      elapsed: Int32Array.of(batch.elapsed[i] as number),
      status: Uint8Array.of(batch.status[i] as number),
      shadowDenied: Int8Array.of(batch.shadowDenied[i] as number),
    })
  }
  return out
}
