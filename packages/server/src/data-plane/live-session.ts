import type { CompiledSession, SessionInput } from '@palisade/core'
import { type EffectiveLimits, hasLimits, type LimitedSessionInput } from '@palisade/store'
import { WireError, WireSqlState } from '../wire/wire-error.js'
import type { DataPlaneBackend, SessionChange } from './backend.js'
import { CompiledSessions } from './compiled-sessions.js'

/** The FATAL a connection answers once its context was removed (docs/errors.md). */
export function sessionGone(): WireError {
  return WireError.fatal(
    WireSqlState.ConnectionFailure,
    'Session context not found - please reconnect',
  )
}

/** The FATAL a token-login session answers once its token expired (docs/sso.md). */
export function sessionTokenExpired(): WireError {
  return WireError.fatal(
    WireSqlState.ConnectionFailure,
    'session token expired - please reconnect with a new token',
  )
}

/** What one data plane (known by its backend) keeps for all its connections. */
interface PlaneSessions {
  /**
   * Upstream versions seen per datasource, so a new session compiles for the right catalog and
   * two data planes in one process never share a guess.
   */
  readonly versions: Map<string, number>
  /** Compiled sessions shared by its connections (compiled-sessions.ts). */
  readonly compiled: CompiledSessions
}

const planes = new WeakMap<DataPlaneBackend, PlaneSessions>()

function planeOf(backend: DataPlaneBackend): PlaneSessions {
  let plane = planes.get(backend)
  if (!plane) {
    plane = { versions: new Map(), compiled: new CompiledSessions() }
    planes.set(backend, plane)
  }
  return plane
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
  #input: SessionInput
  #limits: EffectiveLimits | undefined
  #stale = false
  #removed = false
  #generation = 0
  /** When a token-login session ends (ms since the epoch); none for password logins. */
  #endsAt = Number.POSITIVE_INFINITY
  readonly #backend: DataPlaneBackend

  constructor(input: SessionInput, compiled: CompiledSession, backend: DataPlaneBackend) {
    this.userId = input.user.id
    this.username = input.user.username
    this.datasourceId = input.datasource.id ?? ''
    this.datasourceName = input.datasource.name
    this.#compiled = compiled
    this.#input = input
    this.#limits = limitsOf(input)
    this.#backend = backend
  }

  /** Compiles a new live session from its input. */
  static async create(input: SessionInput, backend: DataPlaneBackend): Promise<LiveSession> {
    const versioned = withServerVersion(
      input,
      planeOf(backend).versions.get(input.datasource.id ?? ''),
    )
    return new LiveSession(versioned, await planeOf(backend).compiled.compile(versioned), backend)
  }

  /**
   * Records the bound upstream's `server_version_num` (it picks the virtual pg_catalog's column
   * lists); recompiles only when it differs from what the session was compiled for.
   */
  async useServerVersion(version: number | undefined): Promise<void> {
    if (version === undefined) return
    planeOf(this.#backend).versions.set(this.datasourceId, version)
    if (this.#input.datasource.serverVersion === version) return
    this.#input = withServerVersion(this.#input, version)
    this.#compiled = await planeOf(this.#backend).compiled.compile(this.#input)
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

  /**
   * Ends the session at its first statement from `endsAt` on (a token login: the token's expiry
   * plus the grace, docs/sso.md), as a removed context ends it.
   */
  endAt(endsAt: number): void {
    this.#endsAt = endsAt
  }

  /**
   * The user's effective limits (docs/roles-and-access.md#limits) as of the last build; undefined
   * when none is set, so users without limits cost nothing per statement.
   */
  get limits(): EffectiveLimits | undefined {
    return this.#limits
  }

  /** Marks the session for a rebuild before its next statement. */
  markStale(): void {
    this.#stale = true
  }

  /**
   * Counts the rebuilds after access changes: a cursor or portal opened under an older
   * generation must not be read under the new rules (cursor-registry.ts).
   */
  get generation(): number {
    return this.#generation
  }

  /**
   * Whether `compiled` can be used as is: no rebuild is due, no grant window it was built under
   * has started or ended since, and the context was not removed.
   */
  get fresh(): boolean {
    return !this.#stale && !this.#removed && !this.#windowPassed() && !this.#tokenExpired()
  }

  #tokenExpired(): boolean {
    // Password sessions never read the clock here: this runs before every statement.
    return this.#endsAt !== Number.POSITIVE_INFINITY && Date.now() >= this.#endsAt
  }

  #windowPassed(): boolean {
    const until = this.#input.validUntil
    return until !== undefined && Date.now() >= until
  }

  /** The session to rewrite with, rebuilt first when stale; throws FATAL 08006 once removed. */
  async current(): Promise<CompiledSession> {
    if (this.#removed) throw sessionGone()
    if (this.#tokenExpired()) {
      this.#removed = true
      throw sessionTokenExpired()
    }
    if (this.#windowPassed()) this.#stale = true
    while (this.#stale) {
      this.#stale = false
      let input: SessionInput | null
      try {
        input = await this.#backend.rebuildSession(this.userId, this.datasourceId)
        if (input) {
          input = withServerVersion(input, this.#input.datasource.serverVersion)
          this.#compiled = await planeOf(this.#backend).compiled.compile(input)
          this.#input = input
          this.#limits = limitsOf(input)
          this.#generation++
        }
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

  /**
   * The last compiled session, without a rebuild: for statements once `fresh` (or `current()`)
   * said it is up to date, and for error scrubbing and audit.
   */
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
  #changes = 0

  constructor(backend: DataPlaneBackend, onEvent: (event: SessionEvent) => void = () => {}) {
    this.#onEvent = onEvent
    this.#unsubscribe = backend.onChange((change) => {
      this.#changes++
      for (const session of this.#sessions) if (session.affectedBy(change)) session.markStale()
    })
  }

  /**
   * How many changes were heard so far. A connection reads it before it reads its session from
   * the store and hands it to `add`: a change heard in between could predate that read.
   */
  get changeCount(): number {
    return this.#changes
  }

  /**
   * Adds a session; returns the function that removes it. When a change was heard since
   * `changesBefore` (the `changeCount` read before the session's input was read), the session
   * is marked so its first statement rebuilds it from the store.
   */
  add(session: LiveSession, changesBefore = this.#changes): () => void {
    if (changesBefore !== this.#changes) session.markStale()
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

function limitsOf(input: SessionInput): EffectiveLimits | undefined {
  const limits = (input as LimitedSessionInput).limits
  return hasLimits(limits) ? limits : undefined
}

function withServerVersion(input: SessionInput, serverVersion: number | undefined): SessionInput {
  if (serverVersion === undefined) return input
  return { ...input, datasource: { ...input.datasource, serverVersion } }
}

/** `server_version` as reported ("15.19 (Debian ...)", "18.0") → `server_version_num`. */
export function serverVersionNumber(text: string | undefined): number | undefined {
  const match = /^(\d+)(?:\.(\d+))?/.exec(text ?? '')
  if (!match) return undefined
  return Number(match[1]) * 10000 + Number(match[2] ?? 0)
}
