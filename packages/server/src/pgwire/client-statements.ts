import type { CompiledSession, RewrittenStatement, ScrubbedError } from '@palisade/core'
import { serialize } from 'pg-protocol'
import { parseComplete } from './backend-messages.js'
import type { ConnectionContext } from './connection-context.js'
import type { UpstreamRelay } from './upstream-relay.js'
import { UpstreamStatements } from './upstream-statements.js'

/** Shared by every Parse without parameter types (never modified). */
export const NO_TYPES: number[] = []

/** A client's prepared statement and the upstream statement that carries its rewritten SQL. */
export interface Prepared {
  upstreamName: string
  originalSql: string
  statement: RewrittenStatement | undefined
  types: number[]
  /** The compiled session it was rewritten for; a rebuild makes it stale. */
  session: CompiledSession
}

/**
 * A connection's prepared statements by client name, each pointing at the upstream statement
 * that carries its rewritten SQL (shared by client statements with the same SQL).
 */
export class ClientStatements {
  readonly #byName = new Map<string, Prepared>()
  readonly #upstream: UpstreamStatements
  readonly #relay: UpstreamRelay

  constructor(ctx: ConnectionContext) {
    this.#relay = ctx.relay
    this.#upstream = new UpstreamStatements(`palisade_${ctx.id}_`, {
      byContent: ctx.relay.sharedStatements,
    })
  }

  /** Names of the upstream statements still open (closed before the session is released). */
  get upstreamNames(): string[] {
    return this.#upstream.names
  }

  get(name: string): Prepared | undefined {
    return this.#byName.get(name)
  }

  has(name: string): boolean {
    return this.#byName.has(name)
  }

  set(name: string, prepared: Prepared): void {
    this.#byName.set(name, prepared)
  }

  /** Forgets a client name; the upstream statement stays for the next one with the same SQL. */
  delete(name: string): void {
    this.#byName.delete(name)
  }

  clear(): void {
    this.#byName.clear()
  }

  /**
   * Points a client statement at the upstream statement for its SQL: an existing one (the
   * ParseComplete is answered here) or a new one (Parse sent upstream; `onRefused` runs when the
   * upstream refuses it). `swallow` hides the answer: a re-prepare the client never asked for.
   */
  prepareUpstream(
    prepared: Prepared,
    onRefused: (error: ScrubbedError) => void,
    swallow = false,
  ): void {
    prepared.upstreamName = this.prepareText(
      prepared.statement?.sql ?? '',
      prepared.types,
      prepared.originalSql,
      onRefused,
      swallow,
    )
  }

  /** `prepareUpstream` for SQL no client statement names; returns the upstream name. */
  prepareText(
    sql: string,
    types: number[],
    originalSql: string,
    onRefused: (error: ScrubbedError) => void,
    swallow: boolean,
  ): string {
    const { name, prepare } = this.#upstream.acquire(sql, types)
    if (!prepare) {
      if (!swallow) this.#relay.local(parseComplete())
      return name
    }
    this.#relay.send(serialize.parse({ name, text: sql, types }), {
      terminals: '1',
      swallow,
      originalSql,
      onDone: (error) => {
        if (!error) return
        this.#upstream.forget(name)
        this.#relay.forgetStatement(name)
        onRefused(error)
      },
    })
    const inUse = (upstream: string) =>
      [...this.#byName.values()].some((p) => p.upstreamName === upstream)
    for (const evicted of this.#upstream.evict(inUse)) this.#closeUpstream(evicted)
    return name
  }

  #closeUpstream(upstreamName: string): void {
    this.#relay.send(serialize.close({ type: 'S', name: upstreamName }), {
      terminals: '3',
      swallow: true,
    })
  }
}
