import { serialize } from 'pg-protocol'
import type { DataPlaneBackend } from '../data-plane/backend.js'
import {
  LiveSession,
  type SessionRegistry,
  serverVersionNumber,
} from '../data-plane/live-session.js'
import { QueryAudit } from '../data-plane/query-audit.js'
import type { StatementGate } from '../data-plane/statement-gate.js'
import type { LoginAttempt, LoginGuard } from '../logins/login-guard.js'
import type { DataPlaneObserver } from '../metrics/server-metrics.js'
import { MAX_TOKEN_BYTES } from '../sso/token-shape.js'
import type { UpstreamSession } from '../upstream/upstream.types.js'
import type { UpstreamRegistry } from '../upstream/upstream-registry.js'
import { errorResponse, toWireFields } from '../wire/error-response.js'
import { WireError, WireSqlState } from '../wire/wire-error.js'
import { violation, WireReader } from '../wire/wire-reader.js'
import { authFailed, ScramServer } from './auth.js'
import {
  authenticationCleartextPassword,
  authenticationOk,
  authenticationSasl,
  backendKeyData,
  readyForQuery,
} from './backend-messages.js'
import type { CancelRegistry } from './cancel-registry.js'
import type { ClientOutput, ClientState, MessageHandler } from './client-socket.js'
import type { ConnectionContext, Rewriter } from './connection-context.js'
import { CursorRegistry } from './cursor-registry.js'
import { ExtendedProtocol } from './extended-protocol.js'
import { Frontend } from './frontend-messages.js'
import { initialParameterStatus } from './parameter-status.js'
import { isLoopback } from './peer-address.js'
import { refusedMessageText, unreadMessageText } from './refused-message.js'
import { refuseQuery, simpleQuery } from './simple-query.js'
import { cancelKey, StartupCode, startupCode, startupParameters } from './startup.js'
import { UpstreamRelay } from './upstream-relay.js'

/** A place among the authenticated sessions, taken once the password is verified. */
export interface SessionSlot {
  /** Takes the place; false when every place is taken. */
  take(): boolean
  release(): void
}

/** Where a connection comes from and when its login must be done. */
export interface ClientPeer {
  address: string
  /** The login timeout's end (ms since the epoch); a throttled login is answered before it. */
  loginDeadline: number
}

/** What every connection of one data plane shares. */
export interface ConnectionServices {
  backend: DataPlaneBackend
  sessions: SessionRegistry
  upstreams: UpstreamRegistry
  cancels: CancelRegistry
  /** How long a client waits for a free upstream session before FATAL 53300. */
  acquireTimeoutMs: number
  /** Numbers of simple-protocol SELECTs go upstream as parameters (docs/rewrite.md). */
  literalParameters: boolean
  /** Rewrites statements; long ones off the thread that serves every connection. */
  rewriter: Rewriter
  /** Metrics of statements, rewrites and refused connections (absent: none kept). */
  observer?: DataPlaneObserver | undefined
  /** Rate and concurrency limits (docs/roles-and-access.md#limits). */
  gate: StatementGate
  /** Reject plaintext startups with FATAL 28000. */
  requireTls: boolean
  /** Token logins (docs/sso.md); absent: off, every login is SCRAM. */
  tokenLogins?: TokenLoginSettings | undefined
  /** Failed-login throttle, audit and log, shared with the admin API. */
  logins: LoginGuard
  /** Operator log for unexpected internal errors (never sent to clients). */
  log: (message: string, error?: unknown) => void
}

/** Where and how identity providers' tokens are accepted as passwords (docs/sso.md). */
export interface TokenLoginSettings {
  /** Also on plaintext connections from other hosts (otherwise TLS or loopback only). */
  withoutTls: boolean
  /** A token-login session ends at its first statement this long after the token's `exp`. */
  sessionGraceMs: number
}

type Phase = 'startup' | 'auth' | 'ready' | 'closed'

let nextConnectionId = 0

/**
 * The protocol state machine of one client connection, driven by `serveClient` (which frames
 * messages and performs the TLS upgrade): GSSENCRequest, CancelRequest, startup, SCRAM, and the
 * simple and extended protocols.
 */
export class ConnectionHandler implements MessageHandler {
  readonly #services: ConnectionServices
  readonly #slot: SessionSlot | undefined
  readonly #peer: ClientPeer
  readonly #id = ++nextConnectionId
  #phase: Phase = 'startup'
  #username = ''
  #database = ''
  #applicationName = ''
  #scram: ScramServer | undefined
  /** The password is asked in clear (token logins), not through SCRAM. */
  #cleartext = false
  /** Set by a cleartext login: the user it proved, and when its token expires (if a token). */
  #verified: { userId: string; expiresAt: number | null } | undefined
  #ctx: ConnectionContext | undefined
  #extended: ExtendedProtocol | undefined
  #upstream: UpstreamSession | undefined
  #cleanups: Array<() => void> = []
  #closing: Promise<void> | undefined

  constructor(services: ConnectionServices, slot?: SessionSlot, peer?: ClientPeer) {
    this.#services = services
    this.#slot = slot
    this.#peer = peer ?? { address: '', loginDeadline: Number.POSITIVE_INFINITY }
  }

  /**
   * Handles one client message. Once ready, the extended protocol's Parse, Bind, Describe,
   * Execute and Close only queue upstream messages: they are handled synchronously and answer
   * undefined (no output yet), which keeps a round trip's five messages off the promise machinery.
   */
  onMessage(bytes: Buffer, state: ClientState, out: ClientOutput): Promise<void> | undefined {
    switch (this.#phase) {
      case 'ready':
        return this.#ready(bytes, out)
      case 'startup':
        return this.#startup(bytes, state, out)
      case 'auth':
        return this.#authenticate(bytes, out)
      case 'closed':
        return undefined
    }
  }

  /** Errors become ErrorResponses; FATAL ones (and internal errors) close the connection. */
  async onFailure(error: unknown, out: ClientOutput): Promise<void> {
    // Before the session is ready every error ends the connection, as in PostgreSQL.
    const fatal = !(error instanceof WireError) || error.fatal || this.#phase !== 'ready'
    if (!(error instanceof WireError)) this.#services.log('data plane: internal error', error)
    if (this.#phase !== 'ready' && this.#phase !== 'closed') {
      this.#services.observer?.refused(error instanceof WireError ? error.fields.code : 'XX000')
    }
    const fields = fatal ? { ...toWireFields(error), severity: 'FATAL' } : toWireFields(error)
    out.write(errorResponse(fields))
    if (fatal) {
      await this.close()
      out.close()
    } else out.write(readyForQuery(this.#ctx?.relay.status ?? 'I'))
  }

  async #startup(bytes: Uint8Array, state: ClientState, out: ClientOutput): Promise<void> {
    const code = startupCode(bytes)
    if (code === StartupCode.GssEncRequest) {
      out.write(Buffer.from('N'))
      return
    }
    if (code === StartupCode.CancelRequest) {
      const { processId, secretKey } = cancelKey(bytes)
      await this.#services.cancels.cancel(processId, secretKey)
      this.#phase = 'closed'
      out.close()
      return
    }
    if (code !== StartupCode.Protocol30) {
      throw violation(`unsupported frontend protocol ${code >>> 16}.${code & 0xffff}`)
    }
    if (this.#services.requireTls && !state.tls) {
      throw WireError.fatal(WireSqlState.InvalidAuthorization, 'TLS connection required')
    }
    const params = startupParameters(bytes)
    const user = params.get('user')
    if (!user) {
      throw WireError.fatal(
        WireSqlState.InvalidAuthorization,
        'no PostgreSQL user name specified in startup packet',
      )
    }
    this.#username = user
    this.#database = params.get('database') || user
    this.#applicationName = params.get('application_name') ?? ''
    const { backend } = this.#services
    this.#phase = 'auth'
    if (await this.#asksCleartext(state)) {
      this.#cleartext = true
      out.write(authenticationCleartextPassword())
      return
    }
    this.#scram = new ScramServer(user, () => backend.scramCredentials(user))
    out.write(authenticationSasl())
  }

  /**
   * Token logins need the password in clear: asked only where they are on, an identity provider
   * is active and the password travels inside TLS or stays on this machine (docs/sso.md). The
   * answer never depends on the user, so it reveals nothing about which users exist.
   */
  async #asksCleartext(state: ClientState): Promise<boolean> {
    const settings = this.#services.tokenLogins
    const { backend } = this.#services
    if (!settings || !backend.checkCleartext || !backend.tokenLoginsAvailable) return false
    if (!state.tls && !settings.withoutTls && !isLoopback(this.#peer.address)) return false
    return backend.tokenLoginsAvailable()
  }

  #attempt(): LoginAttempt {
    return {
      plane: 'data',
      username: this.#username,
      address: this.#peer.address,
      datasource: this.#database,
    }
  }

  /** Holds a throttled attempt, then refuses it like a wrong password. */
  async #throttled(attempt: LoginAttempt): Promise<void> {
    const decision = this.#services.logins.check(attempt)
    if (!decision.throttled) return
    // Answered like a wrong password, only later: the delay is the one signal
    // (docs/operations.md, "Failed logins").
    const hold = Math.min(decision.retryAfterMs, this.#peer.loginDeadline - 250 - Date.now())
    if (hold > 0) await new Promise((resolve) => setTimeout(resolve, hold))
    throw authFailed(this.#username)
  }

  /** A PasswordMessage in clear: an identity provider's token, or a password (docs/sso.md). */
  async #authenticateCleartext(bytes: Uint8Array, out: ClientOutput): Promise<void> {
    const { backend, logins } = this.#services
    if (bytes[0] !== 'p'.charCodeAt(0) || !backend.checkCleartext) {
      throw violation('expected password response')
    }
    const reader = new WireReader(bytes)
    const password = reader.cstring()
    reader.end()
    const attempt = this.#attempt()
    await this.#throttled(attempt)
    const check =
      Buffer.byteLength(password) > MAX_TOKEN_BYTES
        ? { userId: null, expiresAt: null, refusal: 'too_long' as const }
        : await backend.checkCleartext(this.#username, password)
    if (check.refusal !== null) {
      logins.failed(attempt, check.refusal)
      throw authFailed(this.#username)
    }
    logins.succeeded(attempt)
    this.#verified = { userId: check.userId, expiresAt: check.expiresAt }
    await this.#authenticated(out)
  }

  async #authenticate(bytes: Uint8Array, out: ClientOutput): Promise<void> {
    if (this.#cleartext) return this.#authenticateCleartext(bytes, out)
    if (bytes[0] !== 'p'.charCodeAt(0) || !this.#scram) {
      throw violation('expected SASL response')
    }
    const scram = this.#scram
    if (!scram.awaitingProof) {
      out.write((await scram.step(new WireReader(bytes))).reply)
      return
    }
    const { logins } = this.#services
    const attempt = this.#attempt()
    await this.#throttled(attempt)
    let reply: Buffer
    try {
      reply = (await scram.step(new WireReader(bytes))).reply
    } catch (error) {
      if (error instanceof WireError && error.fields.code === WireSqlState.InvalidPassword) {
        logins.failed(attempt, scram.refusal ?? 'wrong_password')
      }
      throw error
    }
    logins.succeeded(attempt)
    out.write(reply)
    await this.#authenticated(out)
  }

  /** After the password or token was accepted: a session place, then the connect steps. */
  async #authenticated(out: ClientOutput): Promise<void> {
    const slot = this.#slot
    if (slot) {
      // Only authenticated sessions count against --max-connections.
      if (!slot.take()) {
        throw WireError.fatal(WireSqlState.TooManyConnections, 'sorry, too many clients already')
      }
      this.#cleanups.push(() => slot.release())
    }
    await this.#connect(out)
  }

  /** Connect steps after authentication (docs/pgwire.md#connecting): datasource, access, compile, upstream. */
  async #connect(out: ClientOutput): Promise<void> {
    const { backend, sessions, upstreams, cancels } = this.#services
    const changesBefore = sessions.changeCount
    const input = await backend.buildSession(this.#username, this.#database)
    if (!input) {
      throw WireError.fatal(
        WireSqlState.InvalidCatalogName,
        `database "${this.#database}" does not exist`,
      )
    }
    if (input.user.username !== this.#username) throw authFailed(this.#username)
    const verified = this.#verified
    if (verified && input.user.id !== verified.userId) throw authFailed(this.#username)
    const live = await LiveSession.create(input, backend)
    if (verified?.expiresAt != null) {
      live.endAt(verified.expiresAt + (this.#services.tokenLogins?.sessionGraceMs ?? 0))
    }
    this.#cleanups.push(sessions.add(live, changesBefore))
    let upstream: UpstreamSession
    try {
      const provider = await upstreams.get(live.datasourceId)
      upstream = await provider.acquire(this.#services.acquireTimeoutMs)
    } catch (error) {
      if (error instanceof WireError) throw error
      this.#services.log('data plane: cannot reach the upstream', error)
      throw WireError.fatal(WireSqlState.ConnectionFailure, 'upstream connection lost')
    }
    this.#upstream = upstream
    if (this.#phase === 'closed') {
      await upstream.release()
      return
    }
    await live.useServerVersion(serverVersionNumber(upstream.parameters.get('server_version')))
    const relay = new UpstreamRelay(upstream, () => live.compiled)
    const ctx: ConnectionContext = {
      id: this.#id,
      live,
      relay,
      audit: new QueryAudit(backend, live, this.#applicationName, this.#services.observer),
      cursors: new CursorRegistry(),
      rewriter: this.#services.rewriter,
      startupApplicationName: this.#applicationName,
      literalParameters: this.#services.literalParameters,
      gate: this.#services.gate,
      rowCaps: new Map(),
      observer: this.#services.observer,
    }
    this.#ctx = ctx
    this.#extended = new ExtendedProtocol(ctx)
    const key = cancels.register({ cancel: () => upstream.cancel() })
    this.#cleanups.push(key.unregister)
    backend.recordLogin?.(live.userId)
    this.#phase = 'ready'
    out.write(
      Buffer.concat([
        authenticationOk(),
        ...initialParameterStatus(upstream.parameters, {
          username: live.username,
          applicationName: this.#applicationName,
        }),
        backendKeyData(key.processId, key.secretKey),
        readyForQuery('I'),
      ]),
    )
  }

  #ready(bytes: Uint8Array, out: ClientOutput): Promise<void> | undefined {
    const ctx = this.#ctx
    const extended = this.#extended
    if (!ctx || !extended) throw violation('connection is not ready')
    const code = bytes[0] ?? 0
    if (!this.#upstream?.alive) {
      const lost = WireError.fatal(WireSqlState.ConnectionFailure, 'upstream connection lost')
      // Each statement of a Query has its audit row, as when its session is lost mid-run.
      const sql = code === Frontend.Query ? statementText(code, bytes) : undefined
      if (sql !== undefined) return this.#notRun(ctx, sql, lost, performance.now())
      this.#notTaken(ctx, code, bytes, lost)
    }
    const reader = new WireReader(bytes)
    switch (code) {
      case Frontend.Parse: {
        // Under transaction pooling a statement takes its upstream session before its rewrite,
        // as a Query does (#query).
        const turn = ctx.relay.sharedStatements ? ctx.relay.reserve() : undefined
        if (!turn) return extended.handle(code, reader, bytes)
        return turn.then(
          () => extended.handle(code, reader, bytes),
          (error: unknown) => this.#notTaken(ctx, code, bytes, error),
        )
      }
      case Frontend.Bind:
      case Frontend.Describe:
      case Frontend.Execute:
      case Frontend.Close:
        return extended.handle(code, reader, bytes)
      case Frontend.Sync: {
        // A statement waits while the query audit falls behind its store: paced, not lost.
        const behind = this.#services.backend.auditBacklog?.()
        return behind ? behind.then(() => extended.sync(out)) : extended.sync(out)
      }
      case Frontend.Flush:
        return extended.flush(out)
      case Frontend.Query: {
        let sql: string
        try {
          sql = reader.cstring()
          reader.end()
        } catch (error) {
          ctx.audit.rejected(refusedMessageText(bytes), error, 0)
          return refuseQuery(ctx, error, out)
        }
        const behind = this.#services.backend.auditBacklog?.()
        return behind
          ? behind.then(() => this.#query(ctx, extended, sql, out))
          : this.#query(ctx, extended, sql, out)
      }
      case Frontend.Terminate:
        return this.#terminate(out)
      case Frontend.CopyData:
      case Frontend.CopyDone:
      case Frontend.CopyFail:
        // COPY is never started, so stray COPY messages are ignored, as PostgreSQL does.
        return undefined
      case Frontend.FunctionCall:
        return this.#refuse(
          ctx,
          bytes,
          WireError.error(WireSqlState.FeatureNotSupported, 'feature not supported: function call'),
        )
      default:
        return this.#refuse(ctx, bytes, violation(`invalid frontend message type ${code}`))
    }
  }

  /** A message refused after login has its audit row, so attempts show up there and in /metrics. */
  #refuse(ctx: ConnectionContext, bytes: Uint8Array, error: WireError): never {
    ctx.audit.rejected(refusedMessageText(bytes), error, 0)
    throw error
  }

  unreadMessage(code: number, length: number, error: unknown): void {
    if (this.#phase === 'ready')
      this.#ctx?.audit.rejected(unreadMessageText(code, length), error, 0)
  }

  /** A statement that reached Palisade has its audit row, even when it cannot run. */
  #notTaken(ctx: ConnectionContext, code: number, bytes: Uint8Array, error: unknown): never {
    const sql = statementText(code, bytes)
    if (sql !== undefined) ctx.audit.rejected(sql, error, 0)
    throw error
  }

  drained(): void {
    // A session taken for a statement that never went upstream (a Parse alone) goes back.
    if (this.#phase === 'ready') this.#ctx?.relay.releaseIdle()
  }

  /**
   * A simple Query. Under transaction pooling the client takes its upstream session first: a
   * client that waits for one then holds its message only, not the statement's rewrite and
   * upstream messages (a thousand waiting clients made the garbage collector copy all of them).
   */
  #query(
    ctx: ConnectionContext,
    extended: ExtendedProtocol,
    sql: string,
    out: ClientOutput,
  ): Promise<void> {
    if (!ctx.relay.sharedStatements) return simpleQuery(ctx, extended, sql, out)
    return this.#pooledQuery(ctx, extended, sql, out, ctx.relay.reserve())
  }

  /** A Query under transaction pooling, once `turn` (the wait for a session, if any) is over. */
  async #pooledQuery(
    ctx: ConnectionContext,
    extended: ExtendedProtocol,
    sql: string,
    out: ClientOutput,
    turn: Promise<unknown> | undefined,
  ): Promise<void> {
    if (turn) {
      const started = performance.now()
      try {
        await turn
      } catch (error) {
        await this.#notRun(ctx, sql, error, started)
      }
    }
    try {
      await simpleQuery(ctx, extended, sql, out)
    } finally {
      ctx.relay.releaseIdle()
    }
  }

  /**
   * A Query that got no upstream session: each of its statements reached Palisade, so each has
   * its audit row, as when the session is lost mid-run (the whole text when it cannot be split).
   */
  async #notRun(
    ctx: ConnectionContext,
    sql: string,
    error: unknown,
    started: number,
  ): Promise<never> {
    let texts = [sql]
    try {
      const session = ctx.live.fresh ? ctx.live.compiled : await ctx.live.current()
      const rewritten = ctx.rewriter.rewrite(sql, session)
      const { statements } = rewritten instanceof Promise ? await rewritten : rewritten
      texts = statements.map((statement) => statement.originalSql)
    } catch {
      // Refused or unreadable: audited as the client sent it.
    }
    for (const text of texts) ctx.audit.rejected(text, error, performance.now() - started)
    throw error
  }

  async #terminate(out: ClientOutput): Promise<void> {
    await this.close()
    out.close()
  }

  /** Releases the upstream session and unregisters the connection; safe to call twice. */
  close(): Promise<void> {
    this.#closing ??= this.#doClose()
    return this.#closing
  }

  async #doClose(): Promise<void> {
    this.#phase = 'closed'
    for (const cleanup of this.#cleanups.splice(0)) cleanup()
    const upstream = this.#upstream
    this.#upstream = undefined
    if (!upstream) return
    try {
      const busy = this.#ctx?.relay.busy ?? false
      this.#ctx?.relay.abandon('the client disconnected before the answer was sent')
      // Statements shared by a transaction pool's clients stay on their backends.
      if (!upstream.sharedStatements) {
        for (const name of this.#extended?.upstreamStatements ?? []) {
          upstream.send(serialize.close({ type: 'S', name }))
        }
      }
      // A statement still running is cancelled: it must not outlive its client.
      await upstream.release({ abandoned: busy })
    } catch (error) {
      this.#services.log('data plane: releasing an upstream session failed', error)
    }
  }
}

/** The SQL a Query or Parse carries, if it can be read (for the audit of one that cannot run). */
function statementText(code: number, bytes: Uint8Array): string | undefined {
  try {
    const reader = new WireReader(bytes)
    if (code === Frontend.Query) return reader.cstring()
    if (code === Frontend.Parse) {
      reader.cstring()
      return reader.cstring()
    }
  } catch {
    // Malformed: nothing to audit.
  }
  return undefined
}
