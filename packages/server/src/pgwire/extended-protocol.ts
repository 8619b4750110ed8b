import {
  type CompiledSession,
  type RewriteResult,
  type RewrittenStatement,
  rewrite,
  type ScrubbedError,
} from '@palisade/core'
import { serialize } from 'pg-protocol'
import type { LeaveStatement } from '../data-plane/statement-gate.js'
import { errorResponse, toWireFields } from '../wire/error-response.js'
import { WireError, WireSqlState } from '../wire/wire-error.js'
import { malformed, type WireReader } from '../wire/wire-reader.js'
import { closeComplete, commandComplete } from './backend-messages.js'
import { checkBindBody } from './bind-message.js'
import type { ClientOutput } from './client-socket.js'
import { ClientStatements, NO_TYPES, type Prepared } from './client-statements.js'
import type { ConnectionContext } from './connection-context.js'
import { ExplainAnswer } from './explain-answer.js'
import { deallocateTarget, extendedStatement } from './extended-statement-check.js'
import { Frontend } from './frontend-messages.js'
import { refusedMessageText } from './refused-message.js'
import { RepeatedStatements } from './repeated-statements.js'
import type { RowCap } from './row-cap.js'
import { runAsPrepared } from './simple-as-prepared.js'
import { enterStatement, rowCapOf, rowCapOutcome } from './statement-limits.js'

/** Messages that rewrite or look up statements: the session must be current for them. */
const NEEDS_SESSION = new Set<number>([Frontend.Parse, Frontend.Bind, Frontend.Describe])
const SYNC = serialize.sync()
/** A parameter reference: such SQL is never turned into a prepared statement. */
const PARAMETER = /\$\d/
/** A bound portal: what its Execute audits, and the access rules it was bound under. */
interface Portal {
  originalSql: string
  statement: RewrittenStatement | undefined
  generation: number
  /** Its row limit, counted across its Executes (docs/roles-and-access.md#limits). */
  rows: RowCap | undefined
}

/**
 * The extended query protocol: Parse carries the rewritten SQL (with its `$n` parameters),
 * Bind/Describe/Execute/Sync/Flush pass through with statement names mapped to upstream names
 * unique to this connection (one PGlite backend is shared by every client). Client statements
 * with the same rewritten SQL share one upstream statement (upstream-statements.ts), so a repeated
 * query is parsed and planned upstream once. A statement rewritten before the session's latest
 * rebuild is rewritten again, and prepared again if its SQL changed, before its next Bind.
 * @see https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-FLOW-EXT-QUERY
 */
export class ExtendedProtocol {
  readonly #ctx: ConnectionContext
  readonly #statements: ClientStatements
  readonly #portals = new Map<string, Portal>()
  /** Simple-protocol SELECTs this connection repeats: prepared upstream from the third run. */
  readonly #repeated = new RepeatedStatements()
  #skipping = false
  /** Store round trips giving back the places of ended statements (shared limits). */
  readonly #leaving: Promise<void>[] = []
  /** Executes sent upstream whose answers have not ended, and what ends them for the gate. */
  #running = 0
  readonly #held: LeaveStatement[] = []
  #lastUpstreamName = ''
  #lastUpstreamNameBytes = Buffer.from([0])

  constructor(ctx: ConnectionContext) {
    this.#ctx = ctx
    this.#statements = new ClientStatements(ctx)
  }

  /** Names of the upstream statements still open (closed before the session is released). */
  get upstreamStatements(): string[] {
    return this.#statements.upstreamNames
  }

  /** After an error, messages are ignored until Sync, as PostgreSQL does. */
  get #ignoring(): boolean {
    return this.#skipping || this.#ctx.relay.skipToSync
  }

  /**
   * Handles Parse, Bind, Describe, Execute or Close: they only queue upstream messages, so they
   * run synchronously, unless the session must be rebuilt first (a change arrived) or a long
   * statement is rewritten in a worker: only then is a promise returned, and the next message
   * waits for it.
   */
  handle(code: number, reader: WireReader, bytes: Uint8Array): Promise<void> | undefined {
    const { live } = this.#ctx
    // After an error PostgreSQL discards messages unread until Sync: malformed ones too.
    if (this.#ignoring) return undefined
    if (NEEDS_SESSION.has(code) && !live.fresh) {
      return live.current().then(() => this.#handleChecked(code, reader, bytes))
    }
    return this.#handleChecked(code, reader, bytes)
  }

  /**
   * A malformed message is an ERROR that skips the batch to Sync, as in PostgreSQL, and has its
   * audit row (refusals of well-formed statements are audited where they are refused).
   */
  #handleChecked(code: number, reader: WireReader, bytes: Uint8Array): Promise<void> | undefined {
    try {
      return this.#handleNow(code, reader, bytes)
    } catch (error) {
      this.#ctx.audit.rejected(refusedMessageText(bytes), error, 0)
      this.#fail(error)
      return undefined
    }
  }

  #handleNow(code: number, reader: WireReader, bytes: Uint8Array): Promise<void> | undefined {
    switch (code) {
      case Frontend.Parse:
        return this.#parse(reader)
      case Frontend.Bind:
        this.#bind(reader, bytes)
        return
      case Frontend.Describe:
        this.#describe(reader)
        return
      case Frontend.Execute:
        return this.#execute(reader, bytes)
      case Frontend.Close:
        this.#close(reader)
        return
    }
    return undefined
  }

  /** Sync: ends the batch upstream and relays every answer due, up to ReadyForQuery. */
  sync(out: ClientOutput): Promise<void> {
    this.#skipping = false
    this.#ctx.relay.send(SYNC, { terminals: 'Z' })
    const drained = this.#ctx.relay.drainTo(out)
    // A user with limits: the statements' places are given back before the round trip ends.
    if (this.#leaving.length === 0 && this.#ctx.live.limits === undefined) return drained
    return drained.then(() => this.#left())
  }

  async #left(): Promise<void> {
    while (this.#leaving.length > 0) await this.#leaving.shift()
  }

  /** Flush: asks the upstream for what it has buffered and relays the answers due. */
  flush(out: ClientOutput): Promise<void> {
    this.#ctx.relay.flush()
    return this.#ctx.relay.drainTo(out)
  }

  #fail(error: unknown): void {
    if (error instanceof WireError && error.fatal) throw error
    this.#ctx.relay.local(errorResponse(toWireFields(error)))
    if (!this.#skipping) this.#ctx.relay.abortTransaction(false)
    this.#skipping = true
  }

  /** Parse: a promise only while a long statement is rewritten in a worker. */
  #parse(reader: WireReader): Promise<void> | undefined {
    const name = reader.cstring()
    const sql = reader.cstring()
    const count = reader.uint16()
    const types = count > 0 ? Array.from({ length: count }, () => reader.int32()) : NO_TYPES
    reader.end()
    const started = performance.now()
    const session = this.#ctx.live.compiled
    if (name !== '' && this.#statements.has(name)) {
      this.#fail(
        WireError.error(
          WireSqlState.DuplicatePreparedStatement,
          `prepared statement "${name}" already exists`,
        ),
      )
      return
    }
    const finish = (result: RewriteResult): void => {
      const statement = this.#checked(sql, result, started, types)
      if (statement === null) return
      const prepared: Prepared = { upstreamName: '', originalSql: sql, statement, types, session }
      this.#statements.set(name, prepared)
      this.#statements.prepareUpstream(prepared, () => {
        if (this.#statements.get(name) === prepared) this.#statements.delete(name)
      })
    }
    let rewritten: RewriteResult | Promise<RewriteResult>
    try {
      rewritten = this.#ctx.rewriter.rewrite(sql, session)
    } catch (error) {
      this.#refuse(sql, error, started)
      return undefined
    }
    if (rewritten instanceof Promise) {
      return rewritten.then(finish, (error: unknown) => this.#refuse(sql, error, started))
    }
    finish(rewritten)
    return undefined
  }

  /**
   * Runs a simple-protocol SELECT as a prepared statement upstream (Parse once, then Bind,
   * Describe, Execute, Sync), so PostgreSQL does not parse and plan the larger rewritten SQL
   * again each time. A statement whose numbers can be parameters (literal-parameters.ts) counts
   * as its shape, so `WHERE id = 17` and `WHERE id = 42` share one. Only from the third time
   * the connection sends the same statement or shape (an ad-hoc query costs no upstream
   * statement), and never for SQL with a `$n` (a simple query has no
   * parameters; PostgreSQL's own error is kept). The answer reads as the plain Query's: Parse and
   * Bind acknowledgements are not relayed, nor the ReadyForQuery. `onError` hears the first
   * error, `onDone` the end. Returns false when the statement should go as a plain Query.
   */
  sendAsPrepared(
    statement: RewrittenStatement,
    onError: (error: ScrubbedError) => void,
    onDone: (error: ScrubbedError | undefined) => void,
    rows?: RowCap,
  ): boolean {
    if (statement.kind !== 'select' || PARAMETER.test(statement.sql)) return false
    // Numbers as parameters: one upstream statement serves the shape, whatever the numbers.
    const parameters = this.#ctx.literalParameters ? statement.parameters : undefined
    if (!this.#repeated.repeated(parameters?.sql ?? statement.sql)) return false
    runAsPrepared(this.#ctx, this.#statements, statement, parameters, onError, onDone, rows)
    return true
  }

  /**
   * Rewrites a statement prepared before the session was rebuilt, for the new session (on this
   * thread: it was accepted once, and only an admin change brings it here).
   */
  #rewriteOne(
    sql: string,
    session: CompiledSession,
    started: number,
  ): RewrittenStatement | undefined | null {
    let result: RewriteResult
    try {
      result = rewrite(sql, session)
    } catch (error) {
      this.#refuse(sql, error, started)
      return null
    }
    return this.#checked(sql, result, started, NO_TYPES)
  }

  /** Checks a rewrite for the extended protocol; on refusal audits it, queues the error, null. */
  #checked(
    sql: string,
    result: RewriteResult,
    started: number,
    types: readonly number[],
  ): RewrittenStatement | undefined | null {
    try {
      return extendedStatement(result, types)
    } catch (error) {
      this.#refuse(sql, error, started)
      return null
    }
  }

  /** Audits a refused statement and queues its error. */
  #refuse(sql: string, error: unknown, started: number): void {
    if (error instanceof WireError && error.fatal) throw error
    this.#ctx.audit.rejected(sql, error, performance.now() - started)
    this.#fail(error)
  }

  /** Looks a statement up, preparing it again first when the session was rebuilt since. */
  #statement(name: string): Prepared | null {
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
    const session = this.#ctx.live.compiled
    if (prepared.session === session) return prepared
    const started = performance.now()
    const statement = this.#rewriteOne(prepared.originalSql, session, started)
    if (statement === null) return null
    prepared.statement = statement
    prepared.session = session
    // Transparent: the client never asked for this Parse, so its ParseComplete is not relayed.
    this.#statements.prepareUpstream(prepared, () => {}, true)
    return prepared
  }

  #bind(reader: WireReader, bytes: Uint8Array): void {
    const portal = reader.cstring()
    // Where the portal's name ends: the client's bytes up to there are sent as they came.
    const portalEnd = bytes.length - reader.remaining
    const name = reader.cstring()
    const rest = reader.rest()
    checkBindBody(rest)
    const prepared = this.#statement(name)
    if (!prepared) return
    const upstreamName = this.#upstreamNameBytes(prepared.upstreamName)
    const frame = Buffer.allocUnsafe(portalEnd + upstreamName.length + rest.length)
    frame.set(bytes.subarray(0, portalEnd), 0)
    frame.writeInt32BE(frame.length - 1, 1)
    frame.set(upstreamName, portalEnd)
    frame.set(rest, portalEnd + upstreamName.length)
    this.#portals.set(portal, {
      originalSql: prepared.originalSql,
      statement: prepared.statement,
      generation: this.#ctx.live.generation,
      rows: rowCapOf(this.#ctx, prepared.statement),
    })
    this.#ctx.relay.send(frame, {
      terminals: '2',
      originalSql: prepared.originalSql,
      statementName: { upstream: prepared.upstreamName, client: name },
    })
  }

  /**
   * The NUL-terminated bytes of an upstream statement name. A client binds the same statement
   * over and over: the last one's bytes are kept.
   */
  #upstreamNameBytes(name: string): Buffer {
    if (name !== this.#lastUpstreamName) {
      this.#lastUpstreamName = name
      this.#lastUpstreamNameBytes = Buffer.from(`${name}\0`)
    }
    return this.#lastUpstreamNameBytes
  }

  #describe(reader: WireReader): void {
    const subtype = reader.byte()
    const type = String.fromCharCode(subtype)
    const name = reader.cstring()
    reader.end()
    if (type === 'S') {
      const prepared = this.#statement(name)
      if (!prepared) return
      this.#ctx.relay.send(serialize.describe({ type: 'S', name: prepared.upstreamName }), {
        terminals: 'Tn',
        originalSql: prepared.originalSql,
        statementName: { upstream: prepared.upstreamName, client: name },
        ...explainReshape(prepared.statement),
      })
    } else if (type === 'P') {
      const portal = this.#portals.get(name)
      this.#ctx.relay.send(serialize.describe({ type: 'P', name }), {
        terminals: 'Tn',
        originalSql: portal?.originalSql,
        ...explainReshape(portal?.statement),
      })
    } else {
      throw malformed(`invalid DESCRIBE message subtype ${subtype}`)
    }
  }

  #execute(reader: WireReader, bytes: Uint8Array): Promise<void> | undefined {
    const name = reader.cstring()
    reader.int32()
    reader.end()
    const portal = this.#portals.get(name)
    const started = performance.now()
    const { audit, live, cursors } = this.#ctx
    // A portal bound, or a cursor declared, before an access change is not read under it.
    const stale =
      portal &&
      (cursors.checkPortal(name, portal.generation, live) ??
        (portal.statement ? cursors.check(portal.statement, live) : undefined))
    if (stale) {
      audit.rejected(portal.originalSql, stale, performance.now() - started)
      this.#fail(stale)
      return undefined
    }
    // Rate and concurrency limits: a refused Execute never runs upstream.
    let entered: ReturnType<typeof enterStatement>
    try {
      entered = enterStatement(this.#ctx, portal?.statement, this.#running > 0)
    } catch (error) {
      audit.rejected(portal?.originalSql ?? '', error, performance.now() - started)
      this.#fail(error)
      return undefined
    }
    if (entered instanceof Promise) {
      return entered.then(
        (leave) => this.#run(bytes, portal, started, leave),
        (error: unknown) => {
          audit.rejected(portal?.originalSql ?? '', error, performance.now() - started)
          this.#fail(error)
        },
      )
    }
    this.#run(bytes, portal, started, entered)
    return undefined
  }

  /** Sends an admitted Execute upstream; its answer's end audits it and ends it for the gate. */
  #run(
    bytes: Uint8Array,
    portal: Portal | undefined,
    started: number,
    leave: LeaveStatement | undefined,
  ): void {
    const { audit } = this.#ctx
    this.#running++
    // A WITH HOLD cursor outlives the transaction: the client keeps its upstream session.
    if (portal?.statement?.cursor?.hold) this.#ctx.relay.pin()
    // A FETCH counts against its cursor's limit, a portal's Executes against the portal's.
    const rows =
      portal?.statement?.kind === 'fetch' ? rowCapOf(this.#ctx, portal.statement) : portal?.rows
    this.#ctx.relay.send(bytes, {
      terminals: 'CIs',
      originalSql: portal?.originalSql,
      rows,
      ...explainReshape(portal?.statement),
      onDone: (error) => {
        this.#running--
        if (leave) this.#held.push(leave)
        // The batch's place is given back once its last statement ended.
        if (this.#running === 0) {
          for (const held of this.#held.splice(0)) {
            const left = held()
            if (left) this.#leaving.push(left)
          }
        }
        const truncated = rowCapOutcome(this.#ctx, rows)
        const statement = portal?.statement
        if (!error && statement?.setting?.name === 'application_name') {
          audit.clientInfo = statement.setting.value ?? this.#ctx.startupApplicationName
        }
        audit.record({
          originalSql: portal?.originalSql ?? '',
          rewrittenSql: statement?.sql ?? null,
          policiesApplied: statement?.policiesApplied ?? [],
          shadow: statement?.shadow,
          // The template describes the statement's own text, which the Parse text is as a rule.
          template:
            statement?.originalSql === portal?.originalSql ? statement?.template : undefined,
          elapsedMs: performance.now() - started,
          status: error ? 'error' : 'success',
          errorMessage: error?.message ?? truncated,
        })
      },
    })
  }

  #close(reader: WireReader): void {
    const subtype = reader.byte()
    const type = String.fromCharCode(subtype)
    const name = reader.cstring()
    reader.end()
    if (type === 'S') {
      // The upstream statement stays for the next client statement with the same SQL; closing
      // one that does not exist is not an error in PostgreSQL either.
      this.#statements.delete(name)
      this.#ctx.relay.local(closeComplete())
    } else if (type === 'P') {
      this.#portals.delete(name)
      this.#ctx.relay.send(serialize.close({ type: 'P', name }), { terminals: '3' })
    } else {
      throw malformed(`invalid CLOSE message subtype ${subtype}`)
    }
  }

  /**
   * SQL-level `DEALLOCATE [PREPARE] name | ALL` (simple query) is handled by the proxy: it
   * forgets the client's names (`ALL` must not touch other clients' statements on a shared
   * backend) and queues the CommandComplete; throws 26000 when the name is unknown.
   */
  deallocate(originalSql: string): void {
    const target = deallocateTarget(originalSql)
    let tag = 'DEALLOCATE'
    if (target.all) {
      this.#statements.clear()
      tag = 'DEALLOCATE ALL'
    } else {
      if (target.name === '' || !this.#statements.has(target.name)) {
        throw WireError.error(
          WireSqlState.InvalidSqlStatementName,
          `prepared statement "${target.name}" does not exist`,
        )
      }
      this.#statements.delete(target.name)
    }
    // Upstream statements stay cached for this connection (upstream-statements.ts).
    this.#ctx.relay.local(commandComplete(tag))
  }
}

/** An EXPLAIN's answer carries its redacted plan in the client's format (explain-answer.ts). */
function explainReshape(statement: RewrittenStatement | undefined): { reshape?: ExplainAnswer } {
  return statement?.explain ? { reshape: new ExplainAnswer(statement.explain) } : {}
}
