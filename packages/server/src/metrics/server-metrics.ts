import { runtimeStats } from '@palisade/core'
import type { Store } from '@palisade/store'
import type { Readiness } from '../health/readiness.js'
import type { LoginLogLine } from '../logins/login-guard.js'
import type { LoginEvent } from '../pgwire/admission.js'
import type { UpstreamEvent, UpstreamPoolState } from '../upstream/upstream.types.js'
import type { Counter } from './exposition/counter.js'
import type { Histogram } from './exposition/histogram.js'
import { MetricRegistry } from './exposition/metric-registry.js'
import { processMetrics } from './process-metrics.js'

/** What the data plane reports as it runs (all optional for embedders without metrics). */
export interface DataPlaneObserver {
  /** One statement's end, as audited: its datasource, status and time from receipt to result. */
  statement(datasource: string, status: string, elapsedMs: number | null): void
  /** One rewrite by Palisade itself (cache hits included). */
  rewrite(elapsedMs: number): void
  /** A connection ended before its session was ready, by the SQLSTATE it was refused with. */
  refused(sqlstate: string): void
  /** One token login (docs/sso.md): accepted or refused, and the time verification took. */
  tokenLogin?(accepted: boolean, elapsedMs: number): void
  /**
   * A statement refused by a rate or concurrency limit, or cut by a row limit
   * (docs/roles-and-access.md#limits).
   */
  limited?(datasource: string, limit: StatementLimitKind): void
}

/** The `limit` label of `palisade_statements_limited_total`. */
export type StatementLimitKind = 'rate' | 'concurrency' | 'rows_error' | 'rows_truncated'

/** What the metrics read at scrape time. */
export interface MetricSources {
  store: Store
  /** Authenticated client sessions now. */
  sessions(): number
  /** Each PostgreSQL datasource's upstream pool now. */
  upstreamPools(): readonly UpstreamPoolState[]
  /** What `GET /ready` checks, read once per scrape. */
  readiness?: Readiness
}

/** Refusal reasons by SQLSTATE; anything else is `other`. */
const REFUSALS: Record<string, string> = {
  '28P01': 'auth_failed',
  '28000': 'tls_required',
  '3D000': 'unknown_database',
  '53300': 'too_many_connections',
  '08006': 'upstream_unavailable',
  '08P01': 'protocol_violation',
  '57014': 'login_timeout',
  '57P01': 'shutting_down',
  '54000': 'message_too_long',
}

/** Buckets from 100 µs to 10 s: a proxy's own time is sub-millisecond, a report takes seconds. */
const SECONDS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10,
]

/**
 * Palisade's Prometheus metrics (docs/operations.md, "Metrics") in a registry of their own, so
 * that several servers in one process (tests, embedders) do not collide. Counters the hot path
 * touches are plain increments; everything that can be read is read at scrape time instead.
 */
export class ServerMetrics implements DataPlaneObserver {
  readonly registry = new MetricRegistry()
  #sources: MetricSources | undefined
  readonly #statements: Counter<'datasource' | 'status'>
  readonly #statementSeconds: Histogram<'datasource'>
  readonly #rewriteSeconds: Histogram
  readonly #refused: Counter<'reason'>
  readonly #loginFailures: Counter<'plane' | 'reason'>
  readonly #loginThrottled: Counter<'plane' | 'scope'>
  readonly #tokenLogins: Counter<'outcome'>
  readonly #tokenLoginSeconds: Histogram
  readonly #upstreamEvents: Counter<'datasource' | 'event'>
  readonly #changeLag: Histogram
  readonly #limited: Counter<'datasource' | 'limit'>

  constructor() {
    for (const metric of processMetrics('palisade_')) this.registry.register(metric)
    this.#statements = this.registry.counter({
      name: 'palisade_statements_total',
      help: 'Statements that reached the data plane, by datasource and audit status',
      labelNames: ['datasource', 'status'],
    })
    this.#statementSeconds = this.registry.histogram({
      name: 'palisade_statement_duration_seconds',
      help: 'Time from a statement reaching Palisade to the end of its result (denied ones excluded)',
      labelNames: ['datasource'],
      buckets: SECONDS,
    })
    this.#rewriteSeconds = this.registry.histogram({
      name: 'palisade_rewrite_duration_seconds',
      help: "Palisade's own time per statement: parse, policy rewrite and deparse, or a cache hit",
      buckets: SECONDS,
    })
    this.#refused = this.registry.counter({
      name: 'palisade_client_connections_refused_total',
      help: 'Data plane connections ended before their session was ready, by reason',
      labelNames: ['reason'],
    })
    this.#loginFailures = this.registry.counter({
      name: 'palisade_login_failures_total',
      help: 'Failed logins (wrong password, unknown or inactive user), by plane and reason',
      labelNames: ['plane', 'reason'],
    })
    this.#loginThrottled = this.registry.counter({
      name: 'palisade_login_throttled_total',
      help: 'Login attempts refused by the failed-login throttle, by plane and scope',
      labelNames: ['plane', 'scope'],
    })
    this.#tokenLogins = this.registry.counter({
      name: 'palisade_token_logins_total',
      help: "Data plane logins with an identity provider's token, accepted or refused (reasons: palisade_login_failures_total)",
      labelNames: ['outcome'],
    })
    this.#tokenLoginSeconds = this.registry.histogram({
      name: 'palisade_token_login_duration_seconds',
      help: 'Time to verify a token and sign its user in, key and discovery fetches included',
      buckets: SECONDS,
    })
    this.#upstreamEvents = this.registry.counter({
      name: 'palisade_upstream_events_total',
      help: 'Upstream outages (unreachable), recoveries and failed connection attempts',
      labelNames: ['datasource', 'event'],
    })
    this.#changeLag = this.registry.histogram({
      name: 'palisade_change_feed_lag_seconds',
      help: "Time from another instance's committed change to its arrival here (clocks must agree)",
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    })
    this.#limited = this.registry.counter({
      name: 'palisade_statements_limited_total',
      help: 'Statements refused by a rate or concurrency limit, or cut by a row limit (error or truncate), by datasource and limit',
      labelNames: ['datasource', 'limit'],
    })
    this.#scraped()
  }

  /** Where the scrape-time values come from; until set, they are absent. */
  attach(sources: MetricSources): void {
    this.#sources = sources
  }

  /** The exposition text and its content type. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.render() }
  }

  limited(datasource: string, limit: StatementLimitKind): void {
    this.#limited.inc({ datasource, limit })
  }

  statement(datasource: string, status: string, elapsedMs: number | null): void {
    this.#statements.inc({ datasource, status })
    if (elapsedMs !== null) this.#statementSeconds.observe({ datasource }, elapsedMs / 1000)
  }

  rewrite(elapsedMs: number): void {
    this.#rewriteSeconds.observe(elapsedMs / 1000)
  }

  refused(sqlstate: string): void {
    this.#refused.inc({ reason: REFUSALS[sqlstate] ?? 'other' })
  }

  tokenLogin(accepted: boolean, elapsedMs: number): void {
    this.#tokenLogins.inc({ outcome: accepted ? 'accepted' : 'refused' })
    this.#tokenLoginSeconds.observe(elapsedMs / 1000)
  }

  /** A login that did not finish (timed out, or dropped for a newer pending connection). */
  loginEvent(event: LoginEvent): void {
    this.#refused.inc({
      reason: event.event === 'login_timeout' ? 'login_timeout' : 'login_dropped',
    })
  }

  /** A failed or throttled login, from the login guard. */
  loginLine(line: LoginLogLine): void {
    if (line.event === 'login_failed') {
      this.#loginFailures.inc({ plane: line.attempt.plane, reason: line.reason })
    } else this.#loginThrottled.inc({ plane: line.attempt.plane, scope: line.scope })
  }

  upstreamEvent(event: UpstreamEvent): void {
    const name = event.event.replace(/^upstream_/, '')
    this.#upstreamEvents.inc({ datasource: event.datasource, event: name })
  }

  /** A change another instance committed arrived after `lagMs`. */
  changeArrived(lagMs: number): void {
    this.#changeLag.observe(Math.max(0, lagMs) / 1000)
  }

  /** Metrics read from their sources at scrape time. */
  #scraped(): void {
    const sources = () => this.#sources
    this.registry.gauge({
      name: 'palisade_client_sessions',
      help: 'Authenticated data plane sessions open now',
      collect(metric) {
        const s = sources()
        if (s) metric.set(s.sessions())
      },
    })
    this.registry.gauge({
      name: 'palisade_upstream_sessions',
      help: 'Upstream PostgreSQL sessions of each datasource now, busy or idle',
      labelNames: ['datasource', 'state'],
      collect(metric) {
        metric.reset()
        for (const pool of sources()?.upstreamPools() ?? []) {
          metric.set({ datasource: pool.datasource, state: 'idle' }, pool.idle)
          metric.set({ datasource: pool.datasource, state: 'busy' }, pool.size - pool.idle)
        }
      },
    })
    this.registry.gauge({
      name: 'palisade_upstream_waiting_clients',
      help: 'Clients waiting for a free upstream session of each datasource now',
      labelNames: ['datasource'],
      collect(metric) {
        metric.reset()
        for (const pool of sources()?.upstreamPools() ?? []) {
          metric.set({ datasource: pool.datasource }, pool.waiting)
        }
      },
    })
    this.registry.counter({
      name: 'palisade_rewrite_cache_total',
      help: 'Rewrites by where the answer came from: the text cache, a literal template, or a full rewrite',
      labelNames: ['result'],
      collect(metric) {
        metric.reset()
        metric.inc({ result: 'hit' }, runtimeStats.rewriteCacheHits)
        metric.inc({ result: 'template' }, runtimeStats.rewriteTemplateHits)
        metric.inc({ result: 'miss' }, runtimeStats.rewriteMisses)
      },
    })
    this.registry.counter({
      name: 'palisade_decision_evaluations_total',
      help: 'Decision-function evaluations',
      collect(metric) {
        metric.reset()
        metric.inc(runtimeStats.decisionEvaluations)
      },
    })
    this.registry.counter({
      name: 'palisade_decision_errors_total',
      help: 'Decision-function evaluations that failed, by kind (fuel and time limits, or other)',
      labelNames: ['kind'],
      collect(metric) {
        metric.reset()
        const { decisionErrors, decisionFuelExhausted, decisionTimeouts } = runtimeStats
        metric.inc({ kind: 'fuel' }, decisionFuelExhausted)
        metric.inc({ kind: 'time' }, decisionTimeouts)
        metric.inc({ kind: 'other' }, decisionErrors - decisionFuelExhausted - decisionTimeouts)
      },
    })
    this.registry.gauge({
      name: 'palisade_query_audit_queue',
      help: 'Query-audit rows waiting to be written to the store',
      collect(metric) {
        const s = sources()
        if (s) metric.set(s.store.audit.queries.writer.queued)
      },
    })
    this.registry.counter({
      name: 'palisade_query_audit_rows_total',
      help: 'Query-audit rows by outcome: written, dropped (queue full) or failed (store refused)',
      labelNames: ['result'],
      collect(metric) {
        const s = sources()
        if (!s) return
        metric.reset()
        const { written, dropped, failed } = s.store.audit.queries.writer.stats
        metric.inc({ result: 'written' }, written)
        metric.inc({ result: 'dropped' }, dropped)
        metric.inc({ result: 'failed' }, failed)
      },
    })
    // The facts of `GET /ready`; the gauges of one scrape share one check.
    const report = () => sources()?.readiness?.check()
    this.registry.gauge({
      name: 'palisade_ready',
      help: 'Whether this instance is ready (GET /ready answers 200): 1 or 0',
      async collect(metric) {
        const r = await report()
        if (r) metric.set(r.ready ? 1 : 0)
      },
    })
    this.registry.gauge({
      name: 'palisade_store_up',
      help: 'Whether the store answered a small read within the readiness timeout: 1 or 0',
      async collect(metric) {
        const r = await report()
        if (r) metric.set(r.store === 'ok' ? 1 : 0)
      },
    })
    this.registry.gauge({
      name: 'palisade_change_feed_live',
      help: "Whether this instance hears other instances' changes (always 1 on PGlite): 1 or 0",
      async collect(metric) {
        const r = await report()
        if (r) metric.set(r.changeFeed === 'live' ? 1 : 0)
      },
    })
    this.registry.gauge({
      name: 'palisade_upstream_reachable',
      help: "Whether each used datasource's upstream answered its last connection attempt: 1 or 0",
      labelNames: ['datasource'],
      async collect(metric) {
        const r = await report()
        if (!r) return
        metric.reset()
        for (const u of r.upstreams) {
          metric.set({ datasource: u.datasource }, u.state === 'reachable' ? 1 : 0)
        }
      },
    })
    this.registry.counter({
      name: 'palisade_login_audit_dropped_total',
      help: 'Login-audit events lost (queue full or store unreachable)',
      collect(metric) {
        const s = sources()
        if (!s) return
        metric.reset()
        metric.inc(s.store.logins.stats.dropped)
      },
    })
  }
}
