/**
 * Which live sessions a committed mutation affects (admin-api 1.7). `members(R)` is resolved to
 * user ids inside the mutation's transaction, so subscribers only see users and datasources.
 */
export type ChangeEvent =
  | { type: 'user'; userIds: readonly string[] }
  | { type: 'ds'; datasourceId: string }
  | { type: 'ds_users'; datasourceId: string; userIds: readonly string[] }
  | { type: 'everyone' }

/** A change event plus where it came from: this process or another instance via NOTIFY. */
export type ChangeNotice = ChangeEvent & { origin: 'local' | 'remote' }

/** A subscriber; exceptions it throws are swallowed so one bad subscriber cannot stop others. */
export type ChangeListener = (notice: ChangeNotice) => void

/** The NOTIFY channel the PostgreSQL driver uses. */
export const CHANGE_CHANNEL = 'palisade_changes'

/** PostgreSQL caps a NOTIFY payload at 8000 bytes; stay well below. */
const MAX_PAYLOAD = 7000

/** In-process publish/subscribe of change events. */
export class ChangeFeed {
  readonly #listeners = new Set<ChangeListener>()
  /** Identifies this process in NOTIFY payloads so it ignores its own echoes. */
  readonly instanceId: string

  constructor(instanceId: string) {
    this.instanceId = instanceId
  }

  /** Registers a listener; returns the unsubscribe function. */
  subscribe(listener: ChangeListener): () => void {
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }

  /** Delivers events to every listener (called after commit). */
  emit(events: readonly ChangeEvent[], origin: 'local' | 'remote'): void {
    for (const event of events) {
      for (const listener of this.#listeners) {
        try {
          listener({ ...event, origin })
        } catch {
          // A failing subscriber must not break the mutation that already committed.
        }
      }
    }
  }

  /** Handles a NOTIFY payload from another instance. Malformed payloads become `everyone`. */
  receive(payload: string): void {
    let parsed: { i?: unknown; e?: unknown }
    try {
      parsed = JSON.parse(payload) as { i?: unknown; e?: unknown }
    } catch {
      this.emit([{ type: 'everyone' }], 'remote')
      return
    }
    if (parsed.i === this.instanceId) return
    const events = Array.isArray(parsed.e) ? parsed.e.map(decodeEvent) : [null]
    this.emit(
      events.some((e) => e === null) ? [{ type: 'everyone' }] : (events as ChangeEvent[]),
      'remote',
    )
  }
}

/** Encodes events as a small NOTIFY payload of ids only; too many ids coarsen the terms. */
export function encodeChangePayload(instanceId: string, events: readonly ChangeEvent[]): string {
  const full = JSON.stringify({ i: instanceId, e: events.map(encodeEvent) })
  if (full.length <= MAX_PAYLOAD) return full
  // ds(D, U) → ds(D); user(U) → everyone: more sessions rebuild, none is missed.
  const coarse = dedupe(
    events.map((e): ChangeEvent => {
      if (e.type === 'ds_users') return { type: 'ds', datasourceId: e.datasourceId }
      if (e.type === 'user') return { type: 'everyone' }
      return e
    }),
  )
  const smaller = JSON.stringify({ i: instanceId, e: coarse.map(encodeEvent) })
  return smaller.length <= MAX_PAYLOAD ? smaller : JSON.stringify({ i: instanceId, e: [['*']] })
}

function dedupe(events: readonly ChangeEvent[]): ChangeEvent[] {
  const seen = new Set<string>()
  return events.filter((e) => {
    const key = JSON.stringify(encodeEvent(e))
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

function encodeEvent(e: ChangeEvent): unknown[] {
  switch (e.type) {
    case 'user':
      return ['u', e.userIds]
    case 'ds':
      return ['d', e.datasourceId]
    case 'ds_users':
      return ['du', e.datasourceId, e.userIds]
    case 'everyone':
      return ['*']
  }
}

function decodeEvent(raw: unknown): ChangeEvent | null {
  if (!Array.isArray(raw)) return null
  const [tag, a, b] = raw as [unknown, unknown, unknown]
  const ids = (v: unknown) =>
    Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : null
  if (tag === '*') return { type: 'everyone' }
  if (tag === 'd' && typeof a === 'string') return { type: 'ds', datasourceId: a }
  if (tag === 'u' && ids(a)) return { type: 'user', userIds: ids(a) as string[] }
  if (tag === 'du' && typeof a === 'string' && ids(b)) {
    return { type: 'ds_users', datasourceId: a, userIds: ids(b) as string[] }
  }
  return null
}
