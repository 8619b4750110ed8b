import { serialize } from 'pg-protocol'
import { WireError, WireSqlState } from '../wire/wire-error.js'
import type { PostgresSession } from './postgres-upstream.js'
import { UNSAFE_UPSTREAM_MESSAGE } from './unsafe-casts.js'
import type { BackendFrame, UpstreamSession } from './upstream.types.js'

const code = (c: string) => c.charCodeAt(0)
const Z = code('Z')
const E = code('E')
const PARSE_COMPLETE = code('1')
const CLOSE_COMPLETE = code('3')
const DATA_ROW = code('D')
const PARSE = code('P')
const BIND = code('B')
const DESCRIBE = code('D')
const CLOSE = code('C')
const QUERY = code('Q')
const SYNC = code('S')
const FLUSH = code('H')
const STATEMENT = code('S')

/** Lends backends one transaction at a time (the pool of a transaction-mode datasource). */
export interface BackendLender {
  readonly datasourceName: string
  /** A backend; rejects with FATAL 53300 after `timeoutMs`, FATAL 08006 when unreachable. */
  borrow(timeoutMs: number): Promise<PostgresSession>
  /** A backend ready at once without a check, if there is one and nobody waits for it. */
  lendIdle(): PostgresSession | undefined
  /** Takes a backend back; `reset` cleans it first. */
  giveBack(session: PostgresSession, reset: boolean): void
}

/** The settings a client may change (statement-classifier.ts), carried from backend to backend. */
const SETTINGS = [
  'application_name',
  'extra_float_digits',
  'client_encoding',
  'client_min_messages',
]
const READ_SETTINGS = serialize.query(
  `SELECT ${SETTINGS.map((s) => `pg_catalog.current_setting('${s}')`).join(', ')}`,
)
/** Statements prepared on one backend beyond this are closed, least recently used first. */
const MAX_STATEMENTS_PER_BACKEND = 500
/** Answered with ParseComplete; stands in for a Parse of a statement the backend already has. */
const EMPTY_PARSE = serialize.parse({ text: '' })
/** Answered with CloseComplete; stands in for a Close of a statement other clients share. */
const CLOSE_UNNAMED = serialize.close({ type: 'S', name: '' })

/**
 * A client's upstream under transaction pooling: it borrows a backend when a transaction (or a
 * statement outside one) starts and gives it back at the ReadyForQuery that reports idle. What
 * the client built up that must outlive a transaction comes along to each backend it runs on:
 * its prepared statements are prepared there first when missing (named after their content, so
 * clients with the same statement share one), and its settings are set when they differ. A
 * WITH HOLD cursor cannot move: `pin` keeps the client on its backend until it disconnects.
 */
export class TransactionSession implements UpstreamSession {
  readonly parameters: ReadonlyMap<string, string>
  readonly sharedStatements = true
  readonly #lender: BackendLender
  readonly #timeoutMs: number
  #bound: PostgresSession | undefined
  /** The client's settings are still to be made present on the bound backend. */
  #replayDue = false
  /** The backend bound last: a Parse refused there is forgotten there. */
  #last: PostgresSession | undefined
  #outgoing: Uint8Array[] = []
  /** The client's upstream statements: name → Parse message. */
  readonly #definitions = new Map<string, Uint8Array>()
  /** Statements that change a setting when executed. */
  readonly #settingStatements = new Set<string>()
  /** The client's settings: name → value (absent: the connection's default). */
  #settings = new Map<string, string>()
  /** A SET ran since the backend was bound: its settings are read back before it goes. */
  #settingsChanged = false
  #pinned = false
  #closed = false
  /** The upstream was checked for unsafe casts when this client first ran a statement. */
  #checked = false
  /** Query and Sync messages sent whose ReadyForQuery is still due. */
  #readyDue = 0
  /** The last message sent was a Query or Sync: its ReadyForQuery ends what was sent. */
  #endsAtReady = true
  #status = 'I'
  /** Answers of messages this session added before the client's, to be consumed unseen. */
  #hiddenReady = 0
  /** Statements this session prepared or closed ahead of the client's messages, in order. */
  #hiddenAcks: Array<string | null> = []
  /** The statement name of the last Bind sent, and its bytes (#boundName). */
  #lastBound = ''
  #lastBoundBytes: Uint8Array = new Uint8Array(0)

  constructor(lender: BackendLender, parameters: ReadonlyMap<string, string>, timeoutMs: number) {
    this.#lender = lender
    this.parameters = parameters
    this.#timeoutMs = timeoutMs
  }

  get alive(): boolean {
    return !this.#closed && (this.#bound?.alive ?? true)
  }

  send(frames: Uint8Array): void {
    if (!this.#closed) this.#outgoing.push(frames)
  }

  read(): Promise<BackendFrame[]> {
    if (this.#outgoing.length > 0) {
      const backend = this.#bound ?? this.#lendIdle()
      if (!backend) return this.#borrowAndRead()
      this.#write(backend)
    }
    return this.#readBound()
  }

  reserve(): Promise<unknown> | undefined {
    if (this.#bound || this.#closed) return undefined
    const idle = this.#lendIdle()
    return idle ? undefined : this.#borrow()
  }

  releaseIdle(): void {
    // Messages still queued here (a Parse without its Sync yet) go to whichever backend is bound
    // when they are sent.
    const backend = this.#bound
    if (!backend || this.#settingsChanged || !this.#idle) return
    this.#bound = undefined
    this.#lender.giveBack(backend, false)
  }

  /** Nothing is due and no transaction is open: the backend may go back. */
  get #idle(): boolean {
    return this.#readyDue === 0 && this.#endsAtReady && this.#status === 'I' && !this.#pinned
  }

  /** Binds a backend given back moments ago, if there is one: no promise per transaction. */
  #lendIdle(): PostgresSession | undefined {
    const idle = this.#checked && !this.#closed ? this.#lender.lendIdle() : undefined
    if (idle) this.#bind(idle)
    return idle
  }

  /** Waits for a backend and binds it. */
  async #borrow(): Promise<PostgresSession> {
    const backend = await this.#lender.borrow(this.#timeoutMs)
    if (this.#closed) {
      this.#lender.giveBack(backend, false)
      throw WireError.fatal(WireSqlState.ConnectionFailure, 'the client disconnected')
    }
    if (!this.#checked) await this.#check(backend)
    this.#bind(backend)
    return backend
  }

  #bind(backend: PostgresSession): void {
    this.#bound = backend
    this.#last = backend
    this.#replayDue = true
  }

  /** Waits for a backend, then sends what the client queued and reads the answer. */
  async #borrowAndRead(): Promise<BackendFrame[]> {
    this.#write(await this.#borrow())
    return this.#readBound()
  }

  async #readBound(): Promise<BackendFrame[]> {
    const backend = this.#bound
    if (!backend) throw new Error('no upstream request is in progress')
    for (;;) {
      const frames = this.#filter(await backend.read())
      if (this.#idle) {
        if (this.#settingsChanged) await this.#readBackSettings(backend)
        else {
          this.#bound = undefined
          this.#lender.giveBack(backend, false)
        }
        return frames
      }
      if (frames.length > 0) return frames
    }
  }

  async cancel(): Promise<void> {
    await this.#bound?.cancel()
  }

  forgetStatement(name: string): void {
    this.#last?.shared.statements.delete(name)
    // Not created: nothing will close it, so it is not kept either.
    this.#definitions.delete(name)
    this.#settingStatements.delete(name)
  }

  pin(): void {
    this.#pinned = true
  }

  async release(options: { abandoned?: boolean } = {}): Promise<void> {
    this.#closed = true
    this.#outgoing = []
    const backend = this.#bound
    this.#bound = undefined
    if (!backend) return
    if (options.abandoned) {
      // Its statement is cancelled; the backend is cleaned, or replaced when it stays busy.
      await backend.abandon()
      this.#lender.giveBack(backend, true)
      return
    }
    const idle = this.#readyDue === 0 && this.#endsAtReady && this.#status === 'I'
    this.#lender.giveBack(backend, !idle || this.#pinned || this.#settingsChanged)
  }

  /**
   * Sends what the client queued to its backend, with what it needs first: on a backend newly
   * bound, the client's settings when they differ; the statements the client's messages use
   * that it lacks; closes of statements beyond its bound.
   */
  #write(backend: PostgresSession): void {
    let replay: Uint8Array | undefined
    if (this.#replayDue) {
      this.#replayDue = false
      replay = this.#replaySettings(backend)
    }
    const statements = backend.shared.statements
    const prepares: Uint8Array[] = []
    const need = (name: string) => {
      if (name === '') return
      if (statements.delete(name)) {
        statements.add(name)
        return
      }
      const definition = this.#definitions.get(name)
      if (!definition) return
      prepares.push(definition)
      this.#hiddenAcks.push(name)
      statements.add(name)
    }
    // The client's chunks go as they are, cut only around a message sent in another form.
    const parts: Uint8Array[] = []
    const outgoing = this.#outgoing
    this.#outgoing = []
    for (const frames of outgoing) {
      // Each chunk holds whole frontend messages.
      let at = 0
      let from = 0
      while (at + 5 <= frames.length) {
        const length =
          ((frames[at + 1] ?? 0) << 24) |
          ((frames[at + 2] ?? 0) << 16) |
          ((frames[at + 3] ?? 0) << 8) |
          (frames[at + 4] ?? 0)
        const end = at + 1 + length
        const instead = this.#track(frames, at, end, statements, need)
        if (instead) {
          if (at > from) parts.push(frames.subarray(from, at))
          parts.push(instead)
          from = end
        }
        at = end
      }
      if (from === 0) parts.push(frames)
      else if (from < frames.length) parts.push(frames.subarray(from))
    }
    // Answers come in this order: the settings replay, evictions, prepares, the client's.
    const closes = statements.size > MAX_STATEMENTS_PER_BACKEND ? this.#evict(statements) : []
    const ahead = [...(replay ? [replay] : []), ...closes, ...prepares]
    const all = ahead.length === 0 ? parts : [...ahead, ...parts]
    backend.send(all.length === 1 ? (all[0] as Uint8Array) : Buffer.concat(all))
  }

  /**
   * Notes what the client message at `at` of `frames` (ending at `end`) creates, needs or ends;
   * returns the message to send instead of it, if any.
   */
  #track(
    frames: Uint8Array,
    at: number,
    end: number,
    statements: Set<string>,
    need: (name: string) => void,
  ): Uint8Array | undefined {
    const kind = frames[at]
    let instead: Uint8Array | undefined
    if (kind === PARSE) {
      const name = cstringAt(frames, at + 5, end)
      if (name !== '') {
        this.#definitions.set(name, frames.subarray(at, end))
        if (isSettingSql(frames, at + 5 + Buffer.byteLength(name) + 1)) {
          this.#settingStatements.add(name)
        }
        // Another client prepared the same statement here already: only acknowledge it.
        if (statements.delete(name)) instead = EMPTY_PARSE
        statements.add(name)
      }
    } else if (kind === BIND) {
      const portalEnd = cstringEnd(frames, at + 5, end)
      const name = this.#boundName(frames, portalEnd < end ? portalEnd + 1 : end, end)
      need(name)
      if (this.#settingStatements.has(name)) this.#settingsChanged = true
    } else if (kind === DESCRIBE && frames[at + 5] === STATEMENT) {
      need(cstringAt(frames, at + 6, end))
    } else if (kind === CLOSE && frames[at + 5] === STATEMENT) {
      const name = cstringAt(frames, at + 6, end)
      if (name !== '') {
        // Shared with other clients on the backend: it stays until evicted.
        this.#definitions.delete(name)
        this.#settingStatements.delete(name)
        instead = CLOSE_UNNAMED
      }
    } else if (kind === QUERY) {
      this.#readyDue++
      if (isSettingSql(frames, at + 5)) this.#settingsChanged = true
    } else if (kind === SYNC) this.#readyDue++
    if (kind !== FLUSH) this.#endsAtReady = kind === QUERY || kind === SYNC
    return instead
  }

  /**
   * The statement name a Bind carries at `at`. A client binds the same few statements over and
   * over: the last name is reused while its bytes match (no new string to hash per Bind).
   */
  #boundName(message: Uint8Array, at: number, limit: number): string {
    const end = cstringEnd(message, at, limit)
    const last = this.#lastBoundBytes
    if (end - at === last.length) {
      let i = 0
      while (i < last.length && message[at + i] === last[i]) i++
      if (i === last.length) return this.#lastBound
    }
    // A copy: a view would keep the client's whole chunk alive.
    this.#lastBoundBytes = Uint8Array.prototype.slice.call(message, at, end)
    this.#lastBound = cstringAt(message, at, end)
    return this.#lastBound
  }

  /**
   * Before a client's first statement, as session pooling does when it hands a session out:
   * no cast between built-in types may run a non-system function (unsafe-casts.ts).
   */
  async #check(backend: PostgresSession): Promise<void> {
    if (await backend.verify()) {
      this.#checked = true
      return
    }
    this.#lender.giveBack(backend, true)
    throw WireError.fatal(WireSqlState.ConnectionFailure, UNSAFE_UPSTREAM_MESSAGE)
  }

  /** A Query that gives a newly bound backend the client's settings, if they differ. */
  #replaySettings(backend: PostgresSession): Uint8Array | undefined {
    const replay = settingsReplay(this.#settings, backend.shared.settings)
    if (!replay) return undefined
    this.#hiddenReady++
    backend.shared.settings.clear()
    for (const [name, value] of this.#settings) backend.shared.settings.set(name, value)
    return serialize.query(replay)
  }

  /** Closes the least recently used statements of a backend beyond its bound. */
  #evict(statements: Set<string>): Uint8Array[] {
    const closes: Uint8Array[] = []
    for (const name of statements) {
      if (statements.size <= MAX_STATEMENTS_PER_BACKEND) break
      statements.delete(name)
      closes.push(serialize.close({ type: 'S', name }))
    }
    this.#hiddenAcks.unshift(...closes.map(() => null))
    return closes
  }

  /**
   * Drops the answers to the messages added ahead of the client's and notes the transaction
   * status. An error in them fails the batch: it reaches the client, and the statements it did
   * not prepare are known to be missing.
   */
  #filter(frames: BackendFrame[]): BackendFrame[] {
    if (this.#hiddenReady === 0 && this.#hiddenAcks.length === 0) {
      for (const frame of frames) if (frame.code === Z) this.#ready(frame)
      return frames
    }
    const kept: BackendFrame[] = []
    for (const frame of frames) {
      if (this.#hiddenReady > 0) {
        if (frame.code === Z) this.#hiddenReady--
        continue
      }
      if (this.#hiddenAcks.length > 0) {
        if (frame.code === PARSE_COMPLETE || frame.code === CLOSE_COMPLETE) {
          this.#hiddenAcks.shift()
          continue
        }
        if (frame.code === E) {
          for (const name of this.#hiddenAcks.splice(0)) {
            if (name !== null) this.#bound?.shared.statements.delete(name)
          }
        }
      }
      if (frame.code === Z) this.#ready(frame)
      kept.push(frame)
    }
    return kept
  }

  #ready(frame: BackendFrame): void {
    this.#readyDue--
    this.#status = String.fromCharCode(frame.bytes[5] ?? 73)
  }

  /** Gives the backend back after a transaction, with the settings a SET left read back first. */
  async #readBackSettings(backend: PostgresSession): Promise<void> {
    this.#bound = undefined
    this.#settingsChanged = false
    const values = await readSettings(backend)
    if (values) {
      this.#settings = new Map(values)
      backend.shared.settings.clear()
      for (const [name, value] of values) backend.shared.settings.set(name, value)
    }
    this.#lender.giveBack(backend, values === undefined)
  }
}

/** The SQL that turns a backend's settings into the client's, or undefined when they match. */
function settingsReplay(
  wanted: ReadonlyMap<string, string>,
  current: ReadonlyMap<string, string>,
): string | undefined {
  const statements: string[] = []
  for (const name of SETTINGS) {
    const value = wanted.get(name)
    if (value === current.get(name)) continue
    statements.push(
      value === undefined ? `RESET ${name}` : `SET ${name} = '${value.replaceAll("'", "''")}'`,
    )
  }
  return statements.length === 0 ? undefined : statements.join('; ')
}

/** The values of the client-settable parameters on `backend`; undefined when they cannot be read. */
async function readSettings(backend: PostgresSession): Promise<Map<string, string> | undefined> {
  backend.send(READ_SETTINGS)
  let row: string[] | undefined
  let failed = false
  try {
    for (;;) {
      for (const frame of await backend.read()) {
        if (frame.code === DATA_ROW) row = dataRowTexts(frame.bytes)
        else if (frame.code === E) failed = true
        else if (frame.code === Z) {
          if (failed || !row) return undefined
          return new Map(SETTINGS.map((name, i) => [name, row?.[i] ?? '']))
        }
      }
    }
  } catch {
    return undefined
  }
}

/** The text columns of a DataRow. */
function dataRowTexts(bytes: Uint8Array): string[] {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const count = view.readInt16BE(5)
  const texts: string[] = []
  let at = 7
  for (let i = 0; i < count; i++) {
    const length = view.readInt32BE(at)
    at += 4
    texts.push(length < 0 ? '' : view.toString('utf8', at, at + length))
    if (length > 0) at += length
  }
  return texts
}

/** Where the NUL-terminated string at `at` ends: its NUL, or `limit` (the message's end). */
function cstringEnd(message: Uint8Array, at: number, limit: number): number {
  const found = message.indexOf(0, at)
  return found < 0 || found > limit ? limit : found
}

/** The NUL-terminated UTF-8 string at `at`, read no further than `limit` (the message's end). */
function cstringAt(message: Uint8Array, at: number, limit = message.length): string {
  if (at >= limit || message[at] === 0) return ''
  const end = cstringEnd(message, at, limit)
  return Buffer.from(message.buffer, message.byteOffset + at, end - at).toString('utf8')
}

/** Whether the SQL text at `at` is a SET or RESET (the proxy writes them in capitals). */
function isSettingSql(message: Uint8Array, at: number): boolean {
  let i = at
  while (message[i] === 32 || message[i] === 10 || message[i] === 9 || message[i] === 13) i++
  return startsWithWord(message, i, SET) || startsWithWord(message, i, RESET)
}

const SET = [...'SET '].map(code)
const RESET = [...'RESET '].map(code)

/** Whether `word` (capitals and a space) is at `at`, in any case. */
function startsWithWord(message: Uint8Array, at: number, word: readonly number[]): boolean {
  for (let i = 0; i < word.length; i++) {
    const c = message[at + i]
    // ASCII lower case to upper (the space is compared as it is).
    if (c === undefined || (c >= 97 && c <= 122 ? c - 32 : c) !== word[i]) return false
  }
  return true
}
