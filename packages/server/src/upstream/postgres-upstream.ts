import { randomUUID } from 'node:crypto'
import { serialize } from 'pg-protocol'
import { asBuffer } from '../wire/as-buffer.js'
import { FrameQueue } from './frame-queue.js'
import { FrameSplitter } from './frame-splitter.js'
import { type PostgresBackend, sendCancel } from './postgres-connect.js'
import { terminateBackend } from './terminate-backend.js'
import { UNSAFE_CASTS_ASSERTION } from './unsafe-casts.js'
import type { BackendFrame, PostgresUpstreamConfig, UpstreamSession } from './upstream.types.js'

const Z = 'Z'.charCodeAt(0)
const D = 'D'.charCodeAt(0)

/** What a transaction-pooled backend keeps between clients (transaction-session.ts). */
export interface SharedBackendState {
  /** Upstream statement names prepared on it; iteration order is least recently used first. */
  readonly statements: Set<string>
  /** Settings a client changed on it: name → value (absent: the connection's default). */
  readonly settings: Map<string, string>
}

/**
 * Reading from the upstream pauses once this much of its answer waits unread: a client that
 * reads a large result slowly holds this much in the proxy, and PostgreSQL waits for the rest.
 */
export const UPSTREAM_HIGH_WATER = 1024 * 1024

/**
 * How long a backend whose client left mid-statement has, after its CancelRequest, to come back
 * idle; past it the session is closed and its backend terminated.
 */
export const ABANDON_WAIT_MS = 2000

/**
 * One pooled PostgreSQL backend at message level: frames out, frames in. `release` hands it
 * back through `onRelease`, which cleans it (rollback, reset) before another client gets it.
 */
export class PostgresSession implements UpstreamSession {
  readonly parameters: ReadonlyMap<string, string>
  readonly #backend: PostgresBackend
  readonly #config: PostgresUpstreamConfig
  readonly #onRelease: (session: PostgresSession) => void
  #queue = new FrameQueue()
  readonly #splitter = new FrameSplitter()
  /** Messages sent since the last read: written together, in one system call. */
  #outgoing: Uint8Array[] = []
  #alive = true
  /** Closed by the proxy (`destroy`), not lost: no sign of an outage. */
  #destroyed = false
  /** `abandon` reads the backend: the client's reader gets nothing more. */
  #abandoning = false
  #status = 'I'
  /**
   * Transaction pooling: what this backend holds for whichever client runs on it next (the
   * statements prepared on it, least recently used first, and the settings clients left).
   */
  readonly shared: SharedBackendState = { statements: new Set(), settings: new Map() }
  /** When the session last went back to its pool (transaction pooling checks it after a pause). */
  idleSince = 0

  constructor(
    backend: PostgresBackend,
    config: PostgresUpstreamConfig,
    onRelease: (session: PostgresSession) => void,
  ) {
    this.#backend = backend
    this.#config = config
    this.#onRelease = onRelease
    this.parameters = backend.parameters
    const { socket } = backend
    backend.reads.listen((chunk) => {
      try {
        const frames = this.#splitter.push(chunk)
        for (const f of frames)
          if (f.code === Z) this.#status = String.fromCharCode(f.bytes[5] ?? 73)
        this.#queue.push(frames)
        if (this.#queue.bufferedBytes >= UPSTREAM_HIGH_WATER) socket.pause()
      } catch (error) {
        this.#lose(error as Error)
      }
    })
    socket.on('error', (error) => this.#lose(error))
    socket.on('close', () => this.#lose(new Error('upstream connection closed')))
  }

  get alive(): boolean {
    return this.#alive
  }

  /** The connection ended without the proxy closing it (the upstream went away). */
  get lost(): boolean {
    return !this.#alive && !this.#destroyed
  }

  /**
   * Whether nothing arrived unasked while the session sat idle: a backend ended by the server
   * (an administrator's terminate, a shutdown) leaves its FATAL here before the socket closes.
   */
  get quiet(): boolean {
    return this.#queue.bufferedBytes === 0
  }

  /** Transaction status of the last ReadyForQuery. */
  get transactionStatus(): string {
    return this.#status
  }

  #lose(error: Error): void {
    if (!this.#alive) return
    this.#alive = false
    this.#queue.fail(error)
    this.#backend.socket.destroy()
  }

  /**
   * Queues messages for the upstream. They are written when the answer is read: an extended
   * query's Parse, Bind, Describe, Execute and Sync leave in one write instead of five (each
   * write is a system call and a packet on a no-delay socket).
   */
  send(frames: Uint8Array): void {
    if (this.#alive && !this.#abandoning) this.#outgoing.push(frames)
  }

  read(): Promise<BackendFrame[]> {
    if (this.#abandoning) return Promise.reject(new Error('the client disconnected'))
    return this.#read()
  }

  #read(): Promise<BackendFrame[]> {
    this.#writeOutgoing()
    const frames = this.#queue.read()
    // What was queued is taken now: read on.
    if (this.#backend.socket.isPaused()) this.#backend.socket.resume()
    return frames
  }

  #writeOutgoing(): void {
    const outgoing = this.#outgoing
    if (outgoing.length === 0) return
    this.#outgoing = []
    if (!this.#alive) return
    this.#backend.socket.write(
      outgoing.length === 1 ? (outgoing[0] as Uint8Array) : Buffer.concat(outgoing),
    )
  }

  async cancel(): Promise<void> {
    await sendCancel(this.#config, this.#backend.processId, this.#backend.secretKey)
  }

  async release(options: { abandoned?: boolean } = {}): Promise<void> {
    if (options.abandoned) await this.abandon()
    this.#onRelease(this)
  }

  /**
   * The client left while a statement of its ran here: cancels it at once, then reads the
   * backend back to idle (transaction rolled back), dropping the answers nobody waits for. A
   * backend not back within `waitMs` is closed and terminated upstream, so the statement cannot
   * outlive its client. Resolves whether the session may be cleaned and reused.
   */
  async abandon(waitMs = ABANDON_WAIT_MS): Promise<boolean> {
    if (!this.#alive) return false
    this.#abandoning = true
    // The reader that relayed to the client is gone with it: it gets an error, not the frames.
    this.#queue.interrupt(new Error('the client disconnected'))
    this.#outgoing = []
    const deadline = Date.now() + waitMs
    try {
      // Sent before the marker: a cancel that came late would hit the marker query instead.
      await withTimeout(this.cancel(), waitMs)
      const marker = randomUUID()
      // The Sync ends a half-sent extended batch; the marker's row tells our answer from the
      // client's (however many ReadyForQuery its messages still had due).
      this.#outgoing.push(
        Buffer.concat([serialize.sync(), serialize.query(`ROLLBACK; SELECT '${marker}'`)]),
      )
      let seen = false
      for (;;) {
        for (const f of await withTimeout(this.#read(), Math.max(1, deadline - Date.now()))) {
          if (f.code === D && asBuffer(f.bytes).includes(marker)) seen = true
          else if (f.code === Z && seen) {
            this.#abandoning = false
            return this.#status === 'I'
          }
        }
      }
    } catch {
      const processId = this.#backend.processId
      this.destroy()
      void terminateBackend(this.#config, processId)
      return false
    }
  }

  /**
   * Makes the backend fit for the next client: rolls back an open transaction, drops cursors
   * and prepared statements and resets the presentation settings a client may have changed.
   * Resolves false when the backend is unusable.
   */
  async clean(): Promise<boolean> {
    if (!this.#alive) return false
    this.#queue.clear()
    // Whatever the last client left unsent is dropped: the reset starts from a clean slate.
    this.#outgoing = []
    const rollback = this.#status === 'I' ? '' : 'ROLLBACK; '
    // The leading Sync ends an extended-protocol batch the client may have left half-sent.
    this.send(
      Buffer.concat([
        serialize.sync(),
        serialize.query(
          `${rollback}CLOSE ALL; DEALLOCATE ALL; RESET application_name; ` +
            'RESET extra_float_digits; RESET client_min_messages; RESET client_encoding; ' +
            // A cast created while the session was in use fails the reset: it is not reused.
            UNSAFE_CASTS_ASSERTION,
        ),
      ]),
    )
    try {
      let ready = 0
      let failed = false
      while (ready < 2) {
        for (const f of await withTimeout(this.read(), 5000)) {
          if (f.code === Z) ready++
          else if (ready === 1 && f.code === 'E'.charCodeAt(0)) failed = true
        }
      }
      this.shared.statements.clear()
      this.shared.settings.clear()
      return !failed && this.#status === 'I'
    } catch {
      this.#lose(new Error('upstream did not answer the reset'))
      return false
    }
  }

  /**
   * Checks, just before the session is handed to a client, that no unsafe cast appeared while
   * it sat idle (unsafe-casts.ts). Resolves false when it did, or the backend is unusable.
   */
  async verify(): Promise<boolean> {
    if (!this.#alive) return false
    this.send(serialize.query(UNSAFE_CASTS_ASSERTION))
    try {
      let failed = false
      for (;;) {
        for (const f of await withTimeout(this.read(), 5000)) {
          if (f.code === 'E'.charCodeAt(0)) failed = true
          if (f.code === Z) return !failed && this.#status === 'I'
        }
      }
    } catch {
      this.#lose(new Error('upstream did not answer the check'))
      return false
    }
  }

  /** Closes the connection. */
  destroy(): void {
    if (this.#alive) {
      this.#destroyed = true
      this.#backend.socket.end(serialize.end())
    }
    this.#lose(new Error('upstream session closed'))
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timeout')), ms)
    promise.then(
      (v) => {
        clearTimeout(timer)
        resolve(v)
      },
      (e) => {
        clearTimeout(timer)
        reject(e)
      },
    )
  })
}
