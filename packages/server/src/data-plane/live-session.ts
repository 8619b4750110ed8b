import { type CompiledSession, compileSession, type SessionInput } from '@palisade/core'
import { WireError, WireSqlState } from '../pgwire/wire-error.js'
import type { DataPlaneBackend, SessionChange } from './backend.js'

/** The FATAL a connection answers once its context was removed (admin-api 17.3). */
export function sessionGone(): WireError {
  return WireError.fatal(
    WireSqlState.ConnectionFailure,
    'Session context not found - please reconnect',
  )
}

/**
 * A connected client's compiled session. A change that affects it marks it stale; the next
 * statement rebuilds it first (a statement already running finishes under the old context).
 * A failed rebuild removes the context for good.
 */
export class LiveSession {
  readonly userId: string
  readonly username: string
  readonly datasourceId: string
  readonly datasourceName: string
  #compiled: CompiledSession
  #stale = false
  #removed = false
  readonly #backend: DataPlaneBackend

  constructor(input: SessionInput, compiled: CompiledSession, backend: DataPlaneBackend) {
    this.userId = input.user.id
    this.username = input.user.username
    this.datasourceId = input.datasource.id ?? ''
    this.datasourceName = input.datasource.name
    this.#compiled = compiled
    this.#backend = backend
  }

  /** Compiles a new live session from its input. */
  static async create(input: SessionInput, backend: DataPlaneBackend): Promise<LiveSession> {
    return new LiveSession(input, await compileSession(input), backend)
  }

  /** Whether a change affects this session. */
  affectedBy(change: SessionChange): boolean {
    switch (change.type) {
      case 'everyone':
        return true
      case 'user':
        return change.userIds.includes(this.userId)
      case 'ds':
        return change.datasourceId === this.datasourceId
      case 'ds_users':
        return change.datasourceId === this.datasourceId && change.userIds.includes(this.userId)
    }
  }

  /** Marks the session for a rebuild before its next statement. */
  markStale(): void {
    this.#stale = true
  }

  /** The session to rewrite with, rebuilt first when stale; throws FATAL 08006 once removed. */
  async current(): Promise<CompiledSession> {
    if (this.#removed) throw sessionGone()
    while (this.#stale) {
      this.#stale = false
      let input: SessionInput | null
      try {
        input = await this.#backend.rebuildSession(this.userId, this.datasourceId)
        if (input) this.#compiled = await compileSession(input)
      } catch {
        input = null
      }
      if (!input) {
        this.#removed = true
        throw sessionGone()
      }
    }
    return this.#compiled
  }

  /** The last compiled session, without a rebuild (error scrubbing, audit). */
  get compiled(): CompiledSession {
    return this.#compiled
  }
}

/** A client session starting or ending, for the operator log. */
export interface SessionEvent {
  event: 'connect' | 'disconnect'
  user: string
  userId: string
  datasource: string
  datasourceId: string
  /** Connected sessions after the event. */
  connections: number
  /** How long the session lasted (disconnect only). */
  durationMs?: number
}

/** Tracks connected sessions and marks them when the store reports a change. */
export class SessionRegistry {
  readonly #sessions = new Set<LiveSession>()
  readonly #unsubscribe: () => void
  readonly #onEvent: (event: SessionEvent) => void

  constructor(backend: DataPlaneBackend, onEvent: (event: SessionEvent) => void = () => {}) {
    this.#onEvent = onEvent
    this.#unsubscribe = backend.onChange((change) => {
      for (const session of this.#sessions) if (session.affectedBy(change)) session.markStale()
    })
  }

  /** Adds a session; returns the function that removes it. */
  add(session: LiveSession): () => void {
    this.#sessions.add(session)
    const started = performance.now()
    this.#emit('connect', session)
    return () => {
      if (!this.#sessions.delete(session)) return
      this.#emit('disconnect', session, Math.round(performance.now() - started))
    }
  }

  #emit(event: SessionEvent['event'], s: LiveSession, durationMs?: number): void {
    try {
      this.#onEvent({
        event,
        user: s.username,
        userId: s.userId,
        datasource: s.datasourceName,
        datasourceId: s.datasourceId,
        connections: this.#sessions.size,
        ...(durationMs === undefined ? {} : { durationMs }),
      })
    } catch {
      // Logging must never break a connection.
    }
  }

  /** Connected sessions. */
  get size(): number {
    return this.#sessions.size
  }

  /** Stops listening for changes. */
  close(): void {
    this.#unsubscribe()
  }
}
