import type { ChangeFeedEvent } from '@palisade/store'
import type { Logger } from 'pino'
import type { SessionEvent } from '../data-plane/live-session.js'
import type { LoginLogLine } from '../logins/login-guard.js'
import type { LoginEvent } from '../pgwire/admission.js'
import type { UpstreamEvent } from '../upstream/upstream.types.js'

/**
 * The data plane's `log` option over pino: internal errors with their name, message and stack
 * (never the statement or its parameters, which are not part of these errors' messages).
 */
export function dataPlaneLog(logger: Logger): (message: string, error?: unknown) => void {
  const log = logger.child({ plane: 'data' })
  return (message, error) => {
    if (error === undefined) log.error({ event: 'internal_error' }, message)
    else log.error({ event: 'internal_error', err: errorFields(error) }, message)
  }
}

/** The admin app's `logger` option over pino (internal errors of the admin plane). */
export function adminAppLog(logger: Logger): (entry: Record<string, unknown>) => void {
  const log = logger.child({ plane: 'admin' })
  return (entry) => {
    const level = typeof entry['level'] === 'string' ? entry['level'] : 'error'
    const { level: _level, ...rest } = entry
    if (level === 'info') log.info(rest)
    else if (level === 'warn') log.warn(rest)
    else log.error(rest)
  }
}

/** The name, message, SQLSTATE and stack of an error, without its enumerable extras. */
export function errorFields(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error) }
  const code = (error as { code?: unknown }).code
  return {
    name: error.name,
    message: error.message,
    ...(typeof code === 'string' ? { code } : {}),
    stack: error.stack,
  }
}

/** The data plane's `onSession` option over pino: one line per connect and disconnect. */
export function connectionLog(logger: Logger): (event: SessionEvent) => void {
  const log = logger.child({ plane: 'data' })
  return (e) =>
    log.info({
      event: e.event,
      user: e.user,
      user_id: e.userId,
      datasource: e.datasource,
      datasource_id: e.datasourceId,
      connections: e.connections,
      ...(e.durationMs === undefined ? {} : { duration_ms: e.durationMs }),
    })
}

/** The data plane's `onLoginEvent` option over pino: warn lines a fail2ban-style filter can match. */
export function loginLog(logger: Logger): (event: LoginEvent) => void {
  const log = logger.child({ plane: 'data' })
  return (e) =>
    log.warn(
      { event: e.event, address: e.address ?? null },
      e.event === 'login_timeout'
        ? 'login did not finish within the login timeout'
        : 'pending login dropped: too many connections awaiting authentication',
    )
}

/**
 * The login guard's log over pino: one warn line per failed or throttled login on either plane,
 * with the name as typed and the address, for fail2ban-style filters. Never the password.
 */
export function loginGuardLog(logger: Logger): (line: LoginLogLine) => void {
  return (line) => {
    const { attempt } = line
    const base = {
      event: line.event,
      plane: attempt.plane,
      user: attempt.username,
      address: attempt.address || null,
      ...(attempt.datasource === undefined ? {} : { datasource: attempt.datasource }),
    }
    if (line.event === 'login_failed') {
      logger.warn({ ...base, reason: line.reason }, 'login failed')
    } else {
      logger.warn(
        { ...base, scope: line.scope, retry_after_s: Math.ceil(line.retryAfterMs / 1000) },
        'login throttled after repeated failures',
      )
    }
  }
}

/** The data plane's `onUpstreamEvent` option over pino: outages (warn) and recoveries (info). */
export function upstreamLog(logger: Logger): (event: UpstreamEvent) => void {
  const log = logger.child({ plane: 'data' })
  return (e) => {
    const fields = {
      event: e.event,
      datasource: e.datasource,
      ...(e.error === undefined ? {} : { error: e.error }),
      ...(e.downMs === undefined ? {} : { down_ms: e.downMs }),
      pool: e.pool,
    }
    if (e.event === 'upstream_unreachable') log.warn(fields, 'upstream unreachable')
    else if (e.event === 'upstream_recovered') log.info(fields, 'upstream reachable again')
    // Every failed attempt of an outage: counted in the metrics, logged only at debug.
    else log.debug(fields, 'upstream connection attempt failed')
  }
}

/**
 * The store's `onChangeFeed` option over pino: the change listener lost and back (after which
 * every session rebuilds once), and changes other instances did not confirm in time.
 */
export function changeFeedLog(logger: Logger): (event: ChangeFeedEvent) => void {
  const log = logger.child({ plane: 'data', event: 'change_feed' })
  return (e) => {
    switch (e.type) {
      case 'listener_lost':
        log.warn({ status: e.type, error: e.error }, 'change listener lost; reconnecting')
        return
      case 'listener_restored':
        log.info(
          { status: e.type },
          'change listener reconnected; every session rebuilds before its next statement',
        )
        return
      case 'unconfirmed':
        log.warn(
          { status: e.type, instance_ids: e.instanceIds, waited_ms: e.waitedMs },
          'instances did not confirm a change in time',
        )
        return
    }
  }
}
