import type { CatalogEdit } from './catalog-edit.js'
import { ChangeConfirmations, CONFIRM_TIMEOUT_MS } from './change-confirmations.js'

/**
 * Which live sessions a committed mutation affects (docs/roles-and-access.md#changes-apply-live). `members(R)` is resolved to
 * user ids inside the mutation's transaction, so subscribers only see users and datasources.
 */
export type ChangeEvent =
  | { type: 'user'; userIds: readonly string[] }
  | {
      type: 'ds'
      datasourceId: string
      /** A catalog change's extent, heard in this process only (never sent to other instances). */
      catalogEdit?: CatalogEdit
    }
  | { type: 'ds_users'; datasourceId: string; userIds: readonly string[] }
  | { type: 'everyone' }

/** A change event plus where it came from: this process or another instance via NOTIFY. */
export type ChangeNotice = ChangeEvent & { origin: 'local' | 'remote' }

/** A subscriber; exceptions it throws are swallowed so one bad subscriber cannot stop others. */
export type ChangeListener = (notice: ChangeNotice) => void

/** A message for the other instances about state each keeps in memory. */
export type InstanceSignal = {
  type: 'login_throttle_cleared'
  scope: 'address' | 'account'
  key: string
}

function decodeSignal(raw: unknown): InstanceSignal | null {
  const s = raw as Partial<InstanceSignal> | null
  if (
    s?.type === 'login_throttle_cleared' &&
    (s.scope === 'address' || s.scope === 'account') &&
    typeof s.key === 'string'
  ) {
    return { type: s.type, scope: s.scope, key: s.key }
  }
  return null
}

/** The NOTIFY channel the PostgreSQL driver uses. */
export const CHANGE_CHANNEL = 'palisade_changes'

/**
 * The `application_name` of every instance's listener connection, followed by a space and the
 * instance id: how a mutation finds the instances that must confirm its change, and how an
 * operator finds them in `pg_stat_activity`.
 */
export const LISTENER_APPLICATION_NAME = 'palisade-change-listener'

/** The listener `application_name` of one instance. */
export function listenerApplicationName(instanceId: string): string {
  return `${LISTENER_APPLICATION_NAME} ${instanceId}`
}

/** PostgreSQL caps a NOTIFY payload at 8000 bytes; stay well below. */
const MAX_PAYLOAD = 7000

/** How the feed confirms changes to other instances: a NOTIFY outside any transaction. */
export interface ChangeTransport {
  /** Whether the listener connection is up (confirmations can only be heard then). */
  readonly listening: boolean
  /** Sends a payload on the change channel; best effort. */
  notify(payload: string): void
}

/** The confirmations a committing mutation waits for. */
export interface ChangeConfirmationWait {
  /** Resolves once every instance confirmed, or after `timeoutMs` (default 2 s). */
  settled(timeoutMs?: number): Promise<void>
  /** The transaction did not commit: expect nothing. */
  cancel(): void
}

/** Listener problems and recoveries, for the operator log. */
export type ChangeFeedEvent =
  | { type: 'listener_lost'; error: string | null }
  | { type: 'listener_restored' }
  | { type: 'unconfirmed'; instanceIds: string[]; waitedMs: number }
  /** Another instance's change arrived `lagMs` after it was sent (for metrics, not the log). */
  | { type: 'received'; lagMs: number }

/**
 * In-process publish/subscribe of change events, plus the cross-instance protocol on PostgreSQL.
 * Messages on the channel are JSON carrying the sender's instance id `i`. A change `{i, n, e}`
 * holds events `e` and the sender's sequence number `n`; every receiver marks its sessions, then
 * confirms with `{i, ack: [sender, n]}`. The sender waits for those confirmations before its
 * mutation returns, so when the admin API answers, every instance that was listening at commit
 * time has marked its affected sessions.
 */
export class ChangeFeed {
  readonly #listeners = new Set<ChangeListener>()
  readonly #signalListeners = new Set<(signal: InstanceSignal) => void>()
  readonly #confirmations = new ChangeConfirmations()
  readonly #onEvent: (event: ChangeFeedEvent) => void
  #transport: ChangeTransport | undefined
  #seq = 0
  /** Identifies this process in NOTIFY payloads so it ignores its own echoes. */
  readonly instanceId: string

  constructor(instanceId: string, onEvent: (event: ChangeFeedEvent) => void = () => {}) {
    this.instanceId = instanceId
    this.#onEvent = onEvent
  }

  /**
   * Sends a signal to the other instances (best effort, no confirmation): state that lives in
   * each process rather than in the store, such as a login throttle an admin cleared.
   */
  signal(signal: InstanceSignal): void {
    this.#transport?.notify(JSON.stringify({ i: this.instanceId, s: signal }))
  }

  /** Registers a listener for other instances' signals; returns the unsubscribe function. */
  onSignal(listener: (signal: InstanceSignal) => void): () => void {
    this.#signalListeners.add(listener)
    return () => {
      this.#signalListeners.delete(listener)
    }
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

  /** Connects the feed to the PostgreSQL listener. */
  attach(transport: ChangeTransport): void {
    this.#transport = transport
  }

  /** The sequence number of the next published change. */
  nextSeq(): number {
    return ++this.#seq
  }

  /**
   * Starts expecting the other listed instances (by id) to confirm change `seq`; call it before
   * the commit. The result's `settled()` resolves once each has marked its sessions, or after
   * `timeoutMs` (logged); at once when this instance cannot hear confirmations.
   */
  expectConfirmations(seq: number, instanceIds: readonly string[]): ChangeConfirmationWait {
    const others = instanceIds.filter((id) => id !== this.instanceId)
    if (others.length === 0 || !this.#transport?.listening) {
      return { settled: async () => {}, cancel: () => {} }
    }
    const pending = this.#confirmations.expect(seq, others)
    return {
      settled: async (timeoutMs = CONFIRM_TIMEOUT_MS) => {
        const started = performance.now()
        const missing = await pending.wait(timeoutMs)
        if (missing.length > 0) {
          const waitedMs = Math.round(performance.now() - started)
          this.#onEvent({ type: 'unconfirmed', instanceIds: missing, waitedMs })
        }
      },
      cancel: () => pending.cancel(),
    }
  }

  /**
   * The listener is subscribed again after a lost connection. Notifications may have been missed,
   * so every session is marked once.
   */
  resumed(): void {
    this.emit([{ type: 'everyone' }], 'remote')
    this.#onEvent({ type: 'listener_restored' })
  }

  /** The listener connection was lost; it reconnects on its own. */
  lost(error: Error | undefined): void {
    this.#onEvent({ type: 'listener_lost', error: error?.message ?? null })
  }

  /** Handles a NOTIFY payload. Malformed payloads become `everyone`. */
  receive(payload: string): void {
    let parsed: { i?: unknown; n?: unknown; e?: unknown; t?: unknown; ack?: unknown; s?: unknown }
    try {
      parsed = JSON.parse(payload) as typeof parsed
    } catch {
      this.emit([{ type: 'everyone' }], 'remote')
      return
    }
    if (parsed.i === this.instanceId) return
    const from = typeof parsed.i === 'string' ? parsed.i : undefined
    if (from && parsed.s !== undefined) {
      const signal = decodeSignal(parsed.s)
      if (signal) {
        for (const listener of this.#signalListeners) {
          try {
            listener(signal)
          } catch {
            // One failing listener must not keep the signal from the others.
          }
        }
      }
      return
    }
    if (from && parsed.ack !== undefined) {
      const [to, seq] = Array.isArray(parsed.ack) ? (parsed.ack as unknown[]) : []
      if (to === this.instanceId && typeof seq === 'number') this.#confirmations.confirm(from, seq)
      else this.#confirmations.heard(from)
      return
    }
    if (typeof parsed.t === 'number')
      this.#onEvent({ type: 'received', lagMs: Date.now() - parsed.t })
    const events = Array.isArray(parsed.e) ? parsed.e.map(decodeEvent) : [null]
    this.emit(
      events.some((e) => e === null) ? [{ type: 'everyone' }] : (events as ChangeEvent[]),
      'remote',
    )
    if (from) {
      this.#confirmations.heard(from)
      // Listeners ran synchronously above: the sessions are marked, so confirm.
      if (typeof parsed.n === 'number') {
        this.#transport?.notify(JSON.stringify({ i: this.instanceId, ack: [from, parsed.n] }))
      }
    }
  }
}

/**
 * Encodes events as a small NOTIFY payload of ids only; too many ids coarsen the terms. `seq`
 * asks receivers to confirm (see `ChangeFeed`).
 */
export function encodeChangePayload(
  instanceId: string,
  events: readonly ChangeEvent[],
  seq?: number,
): string {
  // `t`: when it was sent, so receivers can measure the feed's lag.
  const head =
    seq === undefined ? { i: instanceId, t: Date.now() } : { i: instanceId, n: seq, t: Date.now() }
  const full = JSON.stringify({ ...head, e: events.map(encodeEvent) })
  if (full.length <= MAX_PAYLOAD) return full
  // ds(D, U) → ds(D); user(U) → everyone: more sessions rebuild, none is missed.
  const coarse = dedupe(
    events.map((e): ChangeEvent => {
      if (e.type === 'ds_users') return { type: 'ds', datasourceId: e.datasourceId }
      if (e.type === 'user') return { type: 'everyone' }
      return e
    }),
  )
  const smaller = JSON.stringify({ ...head, e: coarse.map(encodeEvent) })
  return smaller.length <= MAX_PAYLOAD ? smaller : JSON.stringify({ ...head, e: [['*']] })
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
