import { type CompiledSession, type ScrubbedError, scrubUpstreamError } from '@palisade/core'
import { serialize } from 'pg-protocol'
import type { BackendFrame, UpstreamSession } from '../upstream/upstream.types.js'
import { errorResponse } from '../wire/error-response.js'
import { WireError, WireSqlState } from '../wire/wire-error.js'
import { readyForQuery, type TransactionStatus } from './backend-messages.js'
import type { ClientOutput } from './client-socket.js'
import type { RowCap } from './row-cap.js'
import { decodeErrorFields } from './upstream-error.js'

const code = (c: string) => c.charCodeAt(0)
const C = code('C')
const D = code('D')
const E = code('E')
const N = code('N')
const Z = code('Z')
/** Messages the backend may send at any time; they never end a pending request. */
const ASYNC = new Set([code('N'), code('S'), code('A')])

/** The codes of a `terminals` or `hidden` string, built once per distinct string (a handful). */
const terminalSets = new Map<string, ReadonlySet<number>>()
function terminalCodes(terminals: string): ReadonlySet<number> {
  let codes = terminalSets.get(terminals)
  if (!codes) {
    codes = new Set([...terminals].map(code))
    terminalSets.set(terminals, codes)
  }
  return codes
}

/** A request sent upstream whose answer is still due. */
export interface UpstreamRequest {
  /** Backend message codes that end this request's answer, e.g. `C`, `I`, `s` for Execute. */
  terminals: string
  /** Answers are consumed by the proxy instead of relayed (transparent re-prepare). */
  swallow?: boolean
  /** Do not relay the answer's ErrorResponse either (`abortTransaction`). */
  silent?: boolean
  /**
   * Codes of the answer not relayed: ReadyForQuery of a statement of a split simple query,
   * BindComplete of a simple statement run as a prepared one.
   */
  hidden?: string
  /** The client's SQL, so an upstream error can be scrubbed against it. */
  originalSql?: string
  /** The statement's upstream name and the client's: errors quote the client's. */
  statementName?: { readonly upstream: string; readonly client: string }
  /** Called with every frame of the answer before it is relayed. */
  onFrame?: (frame: BackendFrame) => void
  /** Replaces the answer's frames (an EXPLAIN's redacted plan); its error fails the request. */
  reshape?: FrameReshaper
  /** Called once when the answer ends: with the scrubbed error when it failed. */
  onDone?: (error: ScrubbedError | undefined) => void
  /** The statement's row limit (docs/roles-and-access.md#limits); shared by a portal's Executes. */
  rows?: RowCap | undefined
}

/** Rewrites an answer frame by frame: replacement bytes, or undefined to relay nothing. */
export interface FrameReshaper {
  reshape(frame: BackendFrame): Uint8Array | undefined
  readonly error: ScrubbedError | undefined
}

const NO_CODES: ReadonlySet<number> = new Set()

/**
 * An answer due: an upstream request's, or a proxy-made one (`local`). Every entry has the same
 * fields, so the per-frame code reads them from one object shape, whatever the request set.
 */
class Pending {
  readonly local: Buffer | undefined
  readonly terminals: ReadonlySet<number>
  readonly hidden: ReadonlySet<number> | undefined
  readonly swallow: boolean
  readonly silent: boolean
  readonly originalSql: string | undefined
  readonly statementName: UpstreamRequest['statementName']
  readonly onFrame: UpstreamRequest['onFrame']
  readonly reshape: FrameReshaper | undefined
  readonly onDone: UpstreamRequest['onDone']
  readonly rows: RowCap | undefined
  /** The error that failed this request; reported when its answer ends at the Sync. */
  failed: ScrubbedError | undefined = undefined
  /**
   * Its answer is dropped, not relayed: it went past its row limit in `error` mode, or came after
   * one in the same batch (the client skips to Sync, as after any error).
   */
  discarding = false

  constructor(local: Buffer | undefined, request: UpstreamRequest | undefined) {
    this.local = local
    this.terminals = request ? terminalCodes(request.terminals) : NO_CODES
    this.hidden = request?.hidden === undefined ? undefined : terminalCodes(request.hidden)
    this.swallow = request?.swallow === true
    this.silent = request?.silent === true
    this.originalSql = request?.originalSql
    this.statementName = request?.statementName
    this.onFrame = request?.onFrame
    this.reshape = request?.reshape
    this.onDone = request?.onDone
    this.rows = request?.rows
  }
}

/**
 * Relays one client connection's requests to its upstream session in order. Proxy-made answers
 * (`local`) are queued between upstream ones so the client sees them in protocol order. Upstream
 * errors are scrubbed before relaying; after one, the upstream skips to the next Sync, so the
 * queued requests before it are dropped.
 */
export class UpstreamRelay {
  readonly #upstream: UpstreamSession
  readonly #session: () => CompiledSession
  readonly #pending: Pending[] = []
  #status: TransactionStatus = 'I'
  #skipToSync = false
  /** A CancelRequest sent after a row limit cut a statement; awaited before the next one. */
  #cancelling: Promise<void> | undefined
  /** A row limit failed a statement of the extended-protocol batch whose Sync is due. */
  #cutDue = false

  constructor(upstream: UpstreamSession, session: () => CompiledSession) {
    this.#upstream = upstream
    this.#session = session
  }

  /** Transaction status of the last upstream ReadyForQuery. */
  get status(): TransactionStatus {
    return this.#status
  }

  /** Set after an upstream error until the next Sync is sent: the upstream ignores messages. */
  get skipToSync(): boolean {
    return this.#skipToSync
  }

  /** Whether any answer is still due. */
  get busy(): boolean {
    return this.#pending.length > 0
  }

  /** Sends frames upstream and queues the expected answer. */
  send(frames: Uint8Array, request: UpstreamRequest): void {
    this.#upstream.send(frames)
    if (request.terminals.includes('Z')) this.#skipToSync = false
    this.#pending.push(new Pending(undefined, request))
  }

  /** Whether upstream statements are shared by the pool's clients (transaction pooling). */
  get sharedStatements(): boolean {
    return this.#upstream.sharedStatements === true
  }

  /** The upstream refused or skipped the Parse of `name`. */
  forgetStatement(name: string): void {
    this.#upstream.forgetStatement?.(name)
  }

  /** Keeps the client on its upstream session (a WITH HOLD cursor outlives the transaction). */
  pin(): void {
    this.#upstream.pin?.()
  }

  /**
   * Takes an upstream session for the next statement now, before it is rewritten (transaction
   * pooling; undefined when nothing needs waiting for).
   */
  reserve(): Promise<unknown> | undefined {
    return this.#upstream.reserve?.()
  }

  /** Gives back a session `reserve` took that the statement did not use (refused, answered here). */
  releaseIdle(): void {
    // Answers may still be due to messages queued but not sent (a Parse without its Sync): the
    // upstream session knows whether any went out.
    this.#upstream.releaseIdle?.()
  }

  /** Asks the upstream to send what it has buffered (Flush); no answer of its own is due. */
  flush(): void {
    this.#upstream.send(serialize.flush())
  }

  /**
   * After the proxy rejected a statement inside an upstream transaction, fails that transaction
   * too, as PostgreSQL's own error would: later statements get 25P02 until ROLLBACK, and
   * ReadyForQuery reports 'E'. A Parse that cannot parse does it without running anything; its
   * answer is not relayed. `sync` ends it with a Sync (simple query); otherwise the client's own
   * Sync follows (extended protocol).
   */
  abortTransaction(sync: boolean): void {
    if (this.#status !== 'T' || this.#skipToSync) return
    const parse = serialize.parse({ text: ABORT_SQL })
    const request = { swallow: true, silent: true }
    if (sync) this.send(Buffer.concat([parse, serialize.sync()]), { ...request, terminals: 'Z' })
    else this.send(parse, { ...request, terminals: '1' })
  }

  /**
   * Ends every answer still due with `reason` (the upstream or the client went away), so each
   * request's `onDone` runs once and no audit row is lost.
   */
  abandon(reason: string): void {
    const pending = this.#pending.splice(0)
    const error: ScrubbedError = { severity: 'ERROR', code: '08006', message: reason }
    for (const p of pending) if (p.local === undefined) p.onDone?.(error)
  }

  /** Queues a proxy-made answer behind the upstream answers already due. */
  local(bytes: Buffer): void {
    this.#pending.push(new Pending(bytes, undefined))
  }

  /**
   * Relays answers to `out` until nothing is due. Frames are written as they are read; when the
   * client is slow, the next read waits for it (and the upstream session stops reading past its
   * own bound). Stops early once the client is gone.
   */
  async drainTo(out: ClientOutput): Promise<void> {
    let wait: Promise<void> | undefined
    const emit = (bytes: Uint8Array) => {
      wait = out.write(bytes) ?? wait
    }
    while (this.#pending.length > 0) {
      const head = this.#pending[0] as Pending
      if (head.local !== undefined) {
        emit(head.local)
        this.#pending.shift()
        continue
      }
      if (wait) {
        await wait
        wait = undefined
      }
      if (out.ended) return
      // After a row-limit cut, the cancel lands before anything more is read: under transaction
      // pooling the answer's end gives the backend back, and a late cancel must not find it
      // running another client's statement.
      if (this.#cancelling) await this.#cancelled()
      let frames: BackendFrame[]
      try {
        frames = await this.#upstream.read()
      } catch (error) {
        // A pooled client that waited too long for a free upstream session hears why.
        if (error instanceof WireError && error.fatal) {
          this.abandon(error.message)
          throw error
        }
        this.abandon('upstream connection lost')
        throw WireError.fatal(WireSqlState.ConnectionFailure, 'upstream connection lost')
      }
      for (const frame of frames) this.#handle(frame, emit)
    }
    // A cancel that lands late must find the backend idle, not running the next statement.
    if (this.#cancelling) await this.#cancelled()
  }

  async #cancelled(): Promise<void> {
    const cancelling = this.#cancelling
    this.#cancelling = undefined
    await cancelling
  }

  #handle(frame: BackendFrame, emit: (bytes: Uint8Array) => void): void {
    // Emit proxy-made answers that became due.
    let head = this.#pending[0]
    while (head?.local !== undefined) {
      emit(head.local)
      this.#pending.shift()
      head = this.#pending[0]
    }
    if (!head) {
      if (frame.code === N) emit(this.#scrub(frame, undefined, 'N'))
      else if (ASYNC.has(frame.code)) emit(frame.bytes)
      return
    }
    head.onFrame?.(frame)
    if (head.discarding) {
      this.#discard(head, frame, emit)
      return
    }
    if (frame.code === D && head.rows && !head.rows.admit()) {
      if (head.rows.action === 'error') this.#cut(head, emit)
      return
    }
    if (frame.code === C && head.rows?.cut) {
      emit(head.rows.truncatedEnd(frame.bytes))
      if (head.terminals.has(C)) {
        this.#pending.shift()
        head.onDone?.(head.failed)
      }
      return
    }
    if (frame.code === E) {
      const fields = decodeErrorFields(frame.bytes)
      if (fields.severity === 'FATAL' || fields.severity === 'PANIC') {
        // The upstream ends the session (e.g. terminated by an administrator).
        this.abandon('upstream connection lost')
        throw WireError.fatal(WireSqlState.ConnectionFailure, 'upstream connection lost')
      }
      const scrubbed = clientNames(this.#scrubFields(frame, head.originalSql), head.statementName)
      if (!head.silent) emit(errorResponse(scrubbed))
      // The upstream skips everything up to the next Sync: so do the answers we wait for.
      const syncAt = this.#pending.findIndex((p) => p.terminals.has(Z))
      if (syncAt === 0) {
        head.failed = scrubbed
        return
      }
      head.onDone?.(scrubbed)
      if (syncAt < 0) this.#skipToSync = true
      const dropped = this.#pending.splice(0, syncAt < 0 ? this.#pending.length : syncAt)
      for (const p of dropped.slice(1)) p.onDone?.(skipped)
      return
    }
    if (frame.code === Z) {
      this.#status = statusOf(frame)
      if (this.#cutDue && head.terminals.has(Z)) {
        // The client heard a row-limit error: its transaction block has failed, also when the
        // cancel came too late to fail the upstream's.
        this.#cutDue = false
        if (this.#status === 'T') {
          this.#pending.shift()
          head.onDone?.(head.failed)
          emit(readyForQuery('E'))
          this.#failTransaction()
          return
        }
      }
      if (!head.terminals.has(Z)) {
        // Only a Sync is answered with ReadyForQuery: whatever was due before it never comes.
        const syncAt = this.#pending.findIndex((p) => p.terminals.has(Z))
        const dropped = this.#pending.splice(0, syncAt < 0 ? this.#pending.length : syncAt)
        for (const p of dropped) p.onDone?.(skipped)
        this.#handle(frame, emit)
        return
      }
    }
    const terminal = head.terminals.has(frame.code)
    if (frame.code === N) emit(this.#scrub(frame, head.originalSql, 'N'))
    else if (!head.swallow && !head.hidden?.has(frame.code)) {
      const bytes = head.reshape ? head.reshape.reshape(frame) : frame.bytes
      if (bytes) emit(bytes)
    }
    if (terminal) {
      this.#pending.shift()
      head.onDone?.(head.failed ?? head.reshape?.error)
    }
  }

  /**
   * A row past the limit in `error` mode: the client gets 54000 now; the rest of the answer, and
   * of the requests up to the next Sync (skipped, as after any error), is dropped; the upstream
   * statement is cancelled so it does not run on.
   */
  #cut(head: Pending, emit: (bytes: Uint8Array) => void): void {
    const error = (head.rows as RowCap).error()
    emit(errorResponse(error))
    head.failed = error
    head.discarding = true
    let syncAt = 1
    for (; syncAt < this.#pending.length; syncAt++) {
      const p = this.#pending[syncAt] as Pending
      if (p.terminals.has(Z)) break
      p.discarding = true
      p.failed = skipped
    }
    if (!head.terminals.has(Z)) {
      this.#cutDue = true
      if (syncAt >= this.#pending.length) this.#skipToSync = true
    }
    this.#cancelling = this.#upstream.cancel().catch(() => {})
  }

  /**
   * A frame of a dropped answer. It ends at its own terminal or error (extended protocol), or at
   * ReadyForQuery (a simple query's statement). A transaction block the upstream did not fail
   * (the cancel came after the statement ended) is failed here, as the client was told.
   */
  #discard(head: Pending, frame: BackendFrame, emit: (bytes: Uint8Array) => void): void {
    if (frame.code === Z) {
      if (head.terminals.has(Z)) {
        this.#pending.shift()
        this.#status = statusOf(frame)
        this.#cutDue = false
        head.onDone?.(head.failed)
        if (this.#status === 'T') this.#failTransaction()
        return
      }
      // The answers still due before the Sync never come.
      const syncAt = this.#pending.findIndex((p) => p.terminals.has(Z))
      const dropped = this.#pending.splice(0, syncAt < 0 ? this.#pending.length : syncAt)
      for (const p of dropped) p.onDone?.(p.failed)
      this.#handle(frame, emit)
      return
    }
    if (!head.terminals.has(Z) && (frame.code === E || head.terminals.has(frame.code))) {
      this.#pending.shift()
      head.onDone?.(head.failed)
    }
  }

  /** Fails the upstream transaction block without relaying anything (see `abortTransaction`). */
  #failTransaction(): void {
    this.#status = 'T'
    this.#skipToSync = false
    this.abortTransaction(true)
  }

  #scrubFields(frame: BackendFrame, originalSql: string | undefined): ScrubbedError {
    return scrubUpstreamError(decodeErrorFields(frame.bytes), {
      session: this.#session(),
      originalSql,
    })
  }

  #scrub(frame: BackendFrame, originalSql: string | undefined, kind: 'N'): Buffer {
    return errorResponse(this.#scrubFields(frame, originalSql), kind)
  }
}

/** The transaction status of a ReadyForQuery frame. */
function statusOf(frame: BackendFrame): TransactionStatus {
  return String.fromCharCode(frame.bytes[5] ?? 73) as TransactionStatus
}

/** An upstream error quoting the statement's upstream name quotes the client's instead. */
function clientNames(error: ScrubbedError, names: UpstreamRequest['statementName']): ScrubbedError {
  if (!names) return error
  const rename = (text: string) => text.split(`"${names.upstream}"`).join(`"${names.client}"`)
  return {
    ...error,
    message: rename(error.message),
    ...(error.detail === undefined ? {} : { detail: rename(error.detail) }),
  }
}

/** A syntax error: fails the upstream transaction at Parse, before anything is planned or run. */
const ABORT_SQL = 'PALISADE_REJECTED_A_STATEMENT_OF_THIS_TRANSACTION'

/** What requests dropped after an earlier upstream error report. */
const skipped: ScrubbedError = {
  severity: 'ERROR',
  code: '25P02',
  message: 'not executed: an earlier message of the same batch failed',
}
