import type { PGlite } from '@electric-sql/pglite'
import { serialize } from 'pg-protocol'
import { errorResponse } from '../wire/error-response.js'
import { WireError, WireSqlState } from '../wire/wire-error.js'
import { AsyncLock } from './async-lock.js'
import { FrameQueue } from './frame-queue.js'
import { splitFrames } from './frame-splitter.js'
import { UNSAFE_CASTS_QUERY, UnsafeUpstreamError } from './unsafe-casts.js'
import type { BackendFrame, UpstreamProvider, UpstreamSession } from './upstream.types.js'

const Z = 'Z'.charCodeAt(0)
const E = 'E'.charCodeAt(0)

/** What a statement PGlite dropped without an answer gets (PostgreSQL's answer to deep nesting). */
const DROPPED_STATEMENT: BackendFrame = {
  code: E,
  bytes: errorResponse({
    severity: 'ERROR',
    code: WireSqlState.StatementTooComplex,
    message: 'stack depth limit exceeded',
    hint: 'The embedded database gave no answer to the statement: simplify it.',
  }),
}

/** Whether the last message in `bytes` (ours, well framed) is a Query or a Sync: a ReadyForQuery ends it. */
function endsWithReadyRequest(bytes: Uint8Array): boolean {
  const last = splitFrames(bytes).at(-1)?.code
  return last === 'Q'.charCodeAt(0) || last === 'S'.charCodeAt(0)
}

/** Options of the embedded PGlite upstream. */
export interface PgliteUpstreamOptions {
  /** The database; the provider does not close it unless `owned` is set. */
  db: PGlite
  /** Close `db` when the provider closes. */
  owned?: boolean
  /** Applied once to the backend, as defence in depth (0 = none). */
  statementTimeoutMs?: number
}

/**
 * An embedded PGlite as upstream, through `execProtocolRaw`. One PGlite is ONE backend session,
 * so clients share it: a client holds the backend from its first message until a ReadyForQuery
 * reports idle, which serializes whole transactions and never interleaves two clients inside one.
 */
export async function createPgliteUpstream(
  options: PgliteUpstreamOptions,
): Promise<UpstreamProvider> {
  const { db } = options
  await db.exec(
    `SET search_path = ''; SET default_transaction_read_only = on; SET statement_timeout = ${Math.max(0, Math.trunc(options.statementTimeoutMs ?? 0))}`,
  )
  const settings = await db.query<{ name: string; setting: string }>(
    `SELECT name, setting FROM pg_settings WHERE name IN ('server_version', 'server_encoding',
      'DateStyle', 'IntervalStyle', 'TimeZone', 'integer_datetimes', 'standard_conforming_strings')`,
  )
  const parameters = new Map(settings.rows.map((r) => [r.name, r.setting]))
  const lock = new AsyncLock()
  let closed = false
  return {
    async acquire() {
      // One backend for every client: check the casts (unsafe-casts.ts) between transactions.
      const release = await lock.acquire()
      let unsafe: string | null | undefined
      try {
        unsafe = (await db.query<{ unsafe: string | null }>(UNSAFE_CASTS_QUERY)).rows[0]?.unsafe
      } finally {
        release()
      }
      if (unsafe) {
        throw WireError.fatal(
          WireSqlState.ConnectionFailure,
          new UnsafeUpstreamError(unsafe).message,
        )
      }
      return new PgliteSession(db, lock, parameters)
    },
    async close() {
      if (closed) return
      closed = true
      if (options.owned) await db.close()
    },
  }
}

class PgliteSession implements UpstreamSession {
  readonly parameters: ReadonlyMap<string, string>
  readonly #db: PGlite
  readonly #lock: AsyncLock
  readonly #queue = new FrameQueue()
  #chain: Promise<void> = Promise.resolve()
  #release: (() => void) | undefined
  #status = 'I'
  #alive = true

  constructor(db: PGlite, lock: AsyncLock, parameters: ReadonlyMap<string, string>) {
    this.#db = db
    this.#lock = lock
    this.parameters = parameters
  }

  get alive(): boolean {
    return this.#alive
  }

  send(frames: Uint8Array): void {
    const copy = Uint8Array.from(frames)
    this.#chain = this.#chain.then(() => this.#exec(copy))
  }

  read(): Promise<BackendFrame[]> {
    return this.#queue.read()
  }

  async #exec(bytes: Uint8Array): Promise<void> {
    try {
      this.#release ??= await this.#lock.acquire()
      let out = splitFrames(await this.#db.execProtocolRaw(bytes, { syncToFs: false }))
      if (!out.some((f) => f.code === Z) && endsWithReadyRequest(bytes)) {
        // PGlite drops a statement nested deeper than its stack allows without a word, leaving
        // the transaction as it was: answer it as PostgreSQL would, and learn the status.
        const ready = splitFrames(await this.#db.execProtocolRaw(serialize.sync()))
        out = [...out, DROPPED_STATEMENT, ...ready.filter((f) => f.code === Z)]
      }
      for (const frame of out) {
        if (frame.code === Z) this.#status = String.fromCharCode(frame.bytes[5] ?? 73)
      }
      // Idle after a ReadyForQuery: other clients may use the backend until our next message.
      if (out.some((f) => f.code === Z) && this.#status === 'I') this.#unlock()
      this.#queue.push(out)
    } catch (error) {
      this.#alive = false
      this.#unlock()
      this.#queue.fail(error instanceof Error ? error : new Error(String(error)))
    }
  }

  #unlock(): void {
    const release = this.#release
    this.#release = undefined
    release?.()
  }

  async cancel(): Promise<void> {
    // PGlite runs statements synchronously on this thread: nothing can interrupt one.
  }

  async release(): Promise<void> {
    await this.#chain
    if (this.#alive) {
      // Leave the shared backend as a fresh client would find it.
      this.#release ??= await this.#lock.acquire()
      try {
        // The Sync ends a half-sent extended batch; then roll back and reset what a client may
        // have changed. DEALLOCATE ALL would hit other clients: the handler closed its own.
        const reset = this.#status === 'I' ? '' : 'ROLLBACK; '
        await this.#db.execProtocolRaw(
          Buffer.concat([
            serialize.sync(),
            serialize.query(
              `${reset}CLOSE ALL; RESET application_name; RESET extra_float_digits; ` +
                'RESET client_min_messages',
            ),
          ]),
          { syncToFs: false },
        )
      } catch {
        // A broken backend surfaces on the next client's first statement.
      }
    }
    this.#alive = false
    this.#unlock()
  }
}
