import { type CompiledSession, type RewrittenStatement, rewrite } from '@palisade/core'
import { serialize } from 'pg-protocol'
import { closeComplete, commandComplete } from './backend-messages.js'
import type { ConnectionContext } from './connection-context.js'
import { errorResponse, toWireFields } from './error-response.js'
import { WireError, WireSqlState } from './wire-error.js'
import type { WireReader } from './wire-reader.js'
import { WireWriter } from './wire-writer.js'

/** A client's prepared statement and the upstream statement that carries its rewritten SQL. */
interface Prepared {
  upstreamName: string
  originalSql: string
  statement: RewrittenStatement | undefined
  types: number[]
  /** The compiled session it was rewritten for; a rebuild makes it stale. */
  session: CompiledSession
}

/** A bound portal: what its Execute audits. */
interface Portal {
  originalSql: string
  statement: RewrittenStatement | undefined
}

/**
 * The extended query protocol: Parse carries the rewritten SQL (with its `$n` parameters),
 * Bind/Describe/Execute/Close/Sync/Flush pass through with statement names mapped to upstream
 * names unique to this connection (one PGlite backend is shared by every client). A statement
 * rewritten before the session's latest rebuild is prepared again before its next Bind.
 * @see https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-FLOW-EXT-QUERY
 */
export class ExtendedProtocol {
  readonly #ctx: ConnectionContext
  readonly #statements = new Map<string, Prepared>()
  readonly #portals = new Map<string, Portal>()
  #skipping = false
  #counter = 0

  constructor(ctx: ConnectionContext) {
    this.#ctx = ctx
  }

  /** Names of the upstream statements still open (closed before the session is released). */
  get upstreamStatements(): string[] {
    return [...this.#statements.values()].map((p) => p.upstreamName)
  }

  /** After an error, messages are ignored until Sync, as PostgreSQL does. */
  get #ignoring(): boolean {
    return this.#skipping || this.#ctx.relay.skipToSync
  }

  /** Handles one extended-protocol message; yields output at Sync and Flush. */
  async *handle(code: string, reader: WireReader, bytes: Uint8Array): AsyncGenerator<Buffer> {
    switch (code) {
      case 'P':
        return await this.#parse(reader)
      case 'B':
        return await this.#bind(reader)
      case 'D':
        return await this.#describe(reader)
      case 'E':
        return this.#execute(reader, bytes)
      case 'C':
        return this.#close(reader)
      case 'S':
        this.#skipping = false
        this.#ctx.relay.send(serialize.sync(), { terminals: 'Z' })
        return yield* this.#ctx.relay.drain()
      case 'H':
        this.#ctx.relay.flush()
        return yield* this.#ctx.relay.drain()
    }
  }

  #fail(error: unknown): void {
    if (error instanceof WireError && error.fatal) throw error
    this.#ctx.relay.local(errorResponse(toWireFields(error)))
    if (!this.#skipping) this.#ctx.relay.abortTransaction(false)
    this.#skipping = true
  }

  async #parse(reader: WireReader): Promise<void> {
    const name = reader.cstring()
    const sql = reader.cstring()
    const count = reader.int16()
    const types = Array.from({ length: Math.max(0, count) }, () => reader.int32())
    if (this.#ignoring) return
    const started = performance.now()
    const session = await this.#ctx.live.current()
    if (name !== '' && this.#statements.has(name)) {
      return this.#fail(
        WireError.error(
          WireSqlState.DuplicatePreparedStatement,
          `prepared statement "${name}" already exists`,
        ),
      )
    }
    const statement = this.#rewriteOne(sql, session, started)
    if (statement === null) return
    const old = this.#statements.get(name)
    const prepared: Prepared = {
      upstreamName: this.#nextName(),
      originalSql: sql,
      statement,
      types,
      session,
    }
    this.#statements.set(name, prepared)
    this.#ctx.relay.send(
      serialize.parse({ name: prepared.upstreamName, text: statement?.sql ?? '', types }),
      {
        terminals: '1',
        originalSql: sql,
        onDone: (error) => {
          if (error && this.#statements.get(name) === prepared) this.#statements.delete(name)
        },
      },
    )
    if (old) this.#closeUpstream(old.upstreamName)
  }

  /** Rewrites one statement; on rejection audits it, queues the error and returns null. */
  #rewriteOne(
    sql: string,
    session: CompiledSession,
    started: number,
  ): RewrittenStatement | undefined | null {
    try {
      const { statements } = rewrite(sql, session)
      if (statements.length > 1) {
        throw WireError.error(
          WireSqlState.SyntaxError,
          'cannot insert multiple commands into a prepared statement',
        )
      }
      const statement = statements[0]
      if (statement?.kind === 'deallocate') {
        throw WireError.error(
          WireSqlState.FeatureNotSupported,
          'feature not supported: DEALLOCATE in the extended query protocol',
        )
      }
      return statement
    } catch (error) {
      if (error instanceof WireError && error.fatal) throw error
      this.#ctx.audit.rejected(sql, error, performance.now() - started)
      this.#fail(error)
      return null
    }
  }

  #nextName(): string {
    return `palisade_${this.#ctx.id}_${++this.#counter}`
  }

  #closeUpstream(upstreamName: string): void {
    this.#ctx.relay.send(serialize.close({ type: 'S', name: upstreamName }), {
      terminals: '3',
      swallow: true,
    })
  }

  /** Looks a statement up, preparing it again first when the session was rebuilt since. */
  async #statement(name: string): Promise<Prepared | null> {
    const prepared = this.#statements.get(name)
    if (!prepared) {
      this.#fail(
        WireError.error(
          WireSqlState.InvalidSqlStatementName,
          name === ''
            ? 'unnamed prepared statement does not exist'
            : `prepared statement "${name}" does not exist`,
        ),
      )
      return null
    }
    const started = performance.now()
    const session = await this.#ctx.live.current()
    if (prepared.session === session) return prepared
    const statement = this.#rewriteOne(prepared.originalSql, session, started)
    if (statement === null) return null
    const old = prepared.upstreamName
    prepared.upstreamName = this.#nextName()
    prepared.statement = statement
    prepared.session = session
    // Transparent: the client never asked for this Parse, so its ParseComplete is not relayed.
    this.#ctx.relay.send(
      serialize.parse({
        name: prepared.upstreamName,
        text: statement?.sql ?? '',
        types: prepared.types,
      }),
      { terminals: '1', swallow: true, originalSql: prepared.originalSql },
    )
    this.#closeUpstream(old)
    return prepared
  }

  async #bind(reader: WireReader): Promise<void> {
    const portal = reader.cstring()
    const name = reader.cstring()
    const rest = reader.rest()
    if (this.#ignoring) return
    const prepared = await this.#statement(name)
    if (!prepared) return
    const frame = new WireWriter(rest.length + 64)
      .cstring(portal)
      .cstring(prepared.upstreamName)
      .bytes(rest)
      .message('B')
    this.#portals.set(portal, { originalSql: prepared.originalSql, statement: prepared.statement })
    this.#ctx.relay.send(frame, { terminals: '2', originalSql: prepared.originalSql })
  }

  async #describe(reader: WireReader): Promise<void> {
    const type = String.fromCharCode(reader.byte())
    const name = reader.cstring()
    if (this.#ignoring) return
    if (type === 'S') {
      const prepared = await this.#statement(name)
      if (!prepared) return
      this.#ctx.relay.send(serialize.describe({ type: 'S', name: prepared.upstreamName }), {
        terminals: 'Tn',
        originalSql: prepared.originalSql,
      })
    } else if (type === 'P') {
      this.#ctx.relay.send(serialize.describe({ type: 'P', name }), {
        terminals: 'Tn',
        originalSql: this.#portals.get(name)?.originalSql,
      })
    } else {
      throw WireError.fatal(
        WireSqlState.ProtocolViolation,
        `invalid DESCRIBE message subtype ${type}`,
      )
    }
  }

  #execute(reader: WireReader, bytes: Uint8Array): void {
    const name = reader.cstring()
    reader.int32()
    if (this.#ignoring) return
    const portal = this.#portals.get(name)
    const started = performance.now()
    const { audit } = this.#ctx
    this.#ctx.relay.send(bytes, {
      terminals: 'CIs',
      originalSql: portal?.originalSql,
      onDone: (error) => {
        const statement = portal?.statement
        if (!error && statement?.setting?.name === 'application_name') {
          audit.clientInfo = statement.setting.value ?? this.#ctx.startupApplicationName
        }
        audit.record({
          originalSql: portal?.originalSql ?? '',
          rewrittenSql: statement?.sql ?? null,
          policiesApplied: statement?.policiesApplied ?? [],
          elapsedMs: performance.now() - started,
          status: error ? 'error' : 'success',
          errorMessage: error?.message ?? null,
        })
      },
    })
  }

  #close(reader: WireReader): void {
    const type = String.fromCharCode(reader.byte())
    const name = reader.cstring()
    if (this.#ignoring) return
    if (type === 'S') {
      const prepared = this.#statements.get(name)
      this.#statements.delete(name)
      if (!prepared) {
        // Closing a statement that does not exist is not an error in PostgreSQL.
        this.#ctx.relay.local(closeComplete())
        return
      }
      this.#ctx.relay.send(serialize.close({ type: 'S', name: prepared.upstreamName }), {
        terminals: '3',
      })
    } else if (type === 'P') {
      this.#portals.delete(name)
      this.#ctx.relay.send(serialize.close({ type: 'P', name }), { terminals: '3' })
    } else {
      throw WireError.fatal(WireSqlState.ProtocolViolation, `invalid CLOSE message subtype ${type}`)
    }
  }

  /**
   * SQL-level `DEALLOCATE [PREPARE] name | ALL` (simple query) is handled by the proxy: client
   * names map to upstream names, and `ALL` must not touch other clients' statements on a shared
   * backend. Queues the upstream Close messages and the CommandComplete; throws 26000 when the
   * name is unknown.
   */
  deallocate(originalSql: string): void {
    const match = /^\s*deallocate\s+(?:prepare\s+)?(?:"((?:[^"]|"")*)"|([^\s;]+))/i.exec(
      originalSql,
    )
    const quoted = match?.[1]
    const bare = match?.[2]
    let names: string[]
    let tag = 'DEALLOCATE'
    if (quoted === undefined && bare?.toLowerCase() === 'all') {
      names = this.upstreamStatements
      this.#statements.clear()
      tag = 'DEALLOCATE ALL'
    } else {
      const name = quoted?.replaceAll('""', '"') ?? bare?.toLowerCase() ?? ''
      const prepared = this.#statements.get(name)
      if (!prepared || name === '') {
        throw WireError.error(
          WireSqlState.InvalidSqlStatementName,
          `prepared statement "${name}" does not exist`,
        )
      }
      this.#statements.delete(name)
      names = [prepared.upstreamName]
    }
    for (const name of names) this.#closeUpstream(name)
    this.#ctx.relay.send(serialize.sync(), { terminals: 'Z', swallow: true })
    this.#ctx.relay.local(commandComplete(tag))
  }
}
