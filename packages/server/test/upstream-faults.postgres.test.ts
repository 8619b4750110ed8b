/**
 * Failing upstreams and stores under load, on clusters of the test's own: the upstream restarted
 * (`pg_ctl restart -m fast`), killed (`stop -m immediate`) and started again while clients query
 * in a loop, in both pool modes; and a soak of 500 pooled clients through an upstream restart
 * and a store restart. What must hold: the proxy stays up, no client gets a wrong row or waits
 * past the connect timeout, every answered statement has its audit row, and service is back
 * within a second of the upstream's return.
 */
import { createStore, type Store } from '@palisade/store'
import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { createDataPlane, type DataPlane } from '../src/index.js'
import type { UpstreamEvent } from '../src/upstream/upstream.types.js'
import { PASSWORD, seedShop } from './fixtures/seed-store.js'
import { SHOP_SQL } from './fixtures/shop.js'
import { createTestStore } from './fixtures/snapshots.js'
import {
  postgresBinaries,
  startThrowawayCluster,
  type ThrowawayCluster,
} from './fixtures/throwaway-cluster.js'

const enabled = Boolean(process.env['PALISADE_TEST_PG_URL']) && postgresBinaries() !== undefined
const CONNECT_TIMEOUT_MS = 2000
const ALICE_IDS = [10, 11]

/** What one statement of the load got. */
interface Outcome {
  seq: number
  sql: string
  ok: boolean
  /** SQLSTATE of an error Palisade answered; undefined when the connection just ended. */
  code: string | undefined
  /** Where it failed: connecting (the statement never reached Palisade) or running. */
  phase: 'connect' | 'query'
  ms: number
  at: number
  rows?: number[]
}

/** Clients that run numbered statements in a loop, reconnecting after a failure, until stopped. */
class Load {
  readonly outcomes: Outcome[] = []
  readonly #clients: Array<pg.Client | undefined>
  #running = true
  #seq = 0
  readonly #loops: Promise<void>[]
  readonly #port: number
  readonly #statement: (seq: number, worker: number) => { sql: string; params?: unknown[] }

  constructor(
    port: number,
    count: number,
    statement: (seq: number, worker: number) => { sql: string; params?: unknown[] },
  ) {
    this.#port = port
    this.#statement = statement
    this.#clients = Array.from({ length: count }, () => undefined)
    this.#loops = this.#clients.map((_, worker) => this.#loop(worker))
  }

  async #connect(): Promise<pg.Client> {
    const client = new pg.Client({
      host: '127.0.0.1',
      port: this.#port,
      user: 'alice',
      password: PASSWORD,
      database: 'shop',
      connectionTimeoutMillis: 15_000,
    })
    client.on('error', () => {})
    await client.connect()
    return client
  }

  async #loop(worker: number): Promise<void> {
    while (this.#running) {
      const started = Date.now()
      const seq = ++this.#seq
      const { sql, params } = this.#statement(seq, worker)
      let phase: Outcome['phase'] = 'connect'
      try {
        let client = this.#clients[worker]
        if (!client) {
          client = await this.#connect()
          this.#clients[worker] = client
        }
        phase = 'query'
        const result = await client.query(sql, params)
        this.outcomes.push({
          seq,
          sql,
          ok: true,
          code: undefined,
          phase,
          ms: Date.now() - started,
          at: Date.now(),
          rows: result.rows.map((r: { id: number }) => r.id),
        })
      } catch (error) {
        const code = (error as { code?: string }).code
        this.outcomes.push({
          seq,
          sql,
          ok: false,
          code,
          phase,
          ms: Date.now() - started,
          at: Date.now(),
        })
        const client = this.#clients[worker]
        this.#clients[worker] = undefined
        await client?.end().catch(() => {})
        await new Promise((r) => setTimeout(r, 20))
      }
    }
  }

  async stop(): Promise<void> {
    this.#running = false
    await Promise.all(this.#loops)
    await Promise.all(this.#clients.map((c) => c?.end().catch(() => {})))
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Waits until `check` holds, polling; returns when it first held. */
async function until(check: () => boolean, ms: number): Promise<number> {
  const limit = Date.now() + ms
  while (!check()) {
    if (Date.now() > limit) throw new Error('condition not reached in time')
    await sleep(10)
  }
  return Date.now()
}

/** A fresh client connects and gets alice's rows. */
async function expectServesNewClient(port: number): Promise<void> {
  const client = new pg.Client({
    host: '127.0.0.1',
    port,
    user: 'alice',
    password: PASSWORD,
    database: 'shop',
  })
  await client.connect()
  expect((await client.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([{ n: 2 }])
  await client.end()
}

/** Every answered statement has its audit row with the same outcome; none is invented. */
async function expectAudited(store: Store, outcomes: readonly Outcome[]): Promise<void> {
  await sleep(50)
  await store.audit.queries.flush()
  const rows = new Map<string, string[]>()
  for (let page = 1; ; page++) {
    const { data } = await store.audit.queries.list({ page, page_size: 200 })
    for (const r of data)
      rows.set(r.original_query, [...(rows.get(r.original_query) ?? []), r.status])
    if (data.length < 200) break
  }
  for (const o of outcomes) {
    // A block's statements are audited one by one (checked below as sent, not one by one).
    if (o.sql.includes(';')) continue
    const statuses = rows.get(o.sql)
    if (o.phase === 'connect') expect(statuses, o.sql).toBeUndefined()
    else if (o.ok) expect(statuses, o.sql).toEqual(['success'])
    // An error Palisade answered was audited; one that only lost its connection may not have
    // reached Palisade at all, but if it did, it was audited once.
    else if (o.code !== undefined) expect(statuses?.length, o.sql).toBe(1)
    else expect(statuses?.length ?? 0, o.sql).toBeLessThanOrEqual(1)
  }
  const sent = new Set(outcomes.flatMap((o) => o.sql.split(';').map((part) => part.trim())))
  for (const sql of rows.keys()) expect(sent.has(sql.trim()), sql).toBe(true)
}

describe.skipIf(!enabled)('upstream and store faults under load', () => {
  const cleanups: Array<() => Promise<void> | void> = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })

  async function shopCluster(settings: Record<string, number> = {}): Promise<ThrowawayCluster> {
    const cluster = await startThrowawayCluster(settings)
    cleanups.push(() => cluster.destroy())
    const admin = new pg.Client({ connectionString: cluster.url() })
    await admin.connect()
    await admin.query('CREATE DATABASE shop')
    await admin.end()
    const shop = new pg.Client({ connectionString: cluster.url('shop') })
    await shop.connect()
    await shop.query(SHOP_SQL)
    await shop.end()
    return cluster
  }

  async function plane(
    store: Store,
    upstream: ThrowawayCluster,
    mode: 'session' | 'transaction',
    poolSize: number,
    events: UpstreamEvent[],
  ): Promise<DataPlane> {
    await seedShop(store, {
      ds_type: 'postgres',
      pool_size: poolSize,
      pool_mode: mode,
      config: {
        host: '127.0.0.1',
        port: upstream.port,
        database: 'shop',
        username: 'postgres',
        sslmode: 'disable',
      },
    })
    const dataPlane = await createDataPlane({
      store,
      port: 0,
      log: () => {},
      upstreamConnectTimeoutMs: CONNECT_TIMEOUT_MS,
      acquireTimeoutMs: 10_000,
      onUpstreamEvent: (e) => events.push(e),
    })
    cleanups.push(() => dataPlane.close())
    return dataPlane
  }

  for (const mode of ['session', 'transaction'] as const) {
    it(`${mode} pooling: survives a fast restart and a kill, recovers within a second, audits every answer`, async () => {
      const upstream = await shopCluster()
      const store = await createTestStore({ secretKey: 'palisade-fault-tests-only' })
      cleanups.push(() => store.close())
      const events: UpstreamEvent[] = []
      const dataPlane = await plane(store, upstream, mode, mode === 'session' ? 24 : 4, events)
      const load = new Load(dataPlane.port, 16, (seq) => ({
        sql: `SELECT id, ${seq} AS seq FROM orders ORDER BY id`,
      }))
      await sleep(800)
      upstream.restart()
      await sleep(1000)
      upstream.kill()
      await sleep(1000)
      upstream.start()
      const back = Date.now()
      // Service is back within a second of the upstream's return, for new statements.
      const served = await until(() => load.outcomes.some((o) => o.ok && o.at > back), 5000)
      await sleep(500)
      await load.stop()
      expect(served - back).toBeLessThan(1000)
      const answers = load.outcomes
      expect(answers.filter((o) => o.ok).length).toBeGreaterThan(50)
      expect(answers.filter((o) => !o.ok).length).toBeGreaterThan(0)
      // No wrong row, ever; failures are clean connection errors.
      for (const o of answers) {
        if (o.ok) expect(o.rows).toEqual(ALICE_IDS)
        else expect([undefined, '08006', '57P01', '53300']).toContain(o.code)
        expect(o.ms).toBeLessThan(CONNECT_TIMEOUT_MS + 2000)
      }
      await expectAudited(store, answers)
      expect(events.map((e) => e.event)).toContain('upstream_unreachable')
      expect(events.at(-1)?.event).toBe('upstream_recovered')
      // The proxy is still up and serves a new client.
      await expectServesNewClient(dataPlane.port)
    }, 120_000)
  }

  it('soak: 500 pooled clients through an upstream restart and a store restart', async () => {
    const upstream = await shopCluster()
    const storeCluster = await startThrowawayCluster()
    cleanups.push(() => storeCluster.destroy())
    const store = await createStore({
      databaseUrl: storeCluster.url(),
      secretKey: 'palisade-fault-tests-only',
    })
    cleanups.push(() => store.close())
    const events: UpstreamEvent[] = []
    const dataPlane = await plane(store, upstream, 'transaction', 10, events)
    // Mixed statements: simple and extended, a transaction block, a refused write.
    const load = new Load(dataPlane.port, 500, (seq, worker) => {
      switch (worker % 4) {
        case 0:
          return { sql: `SELECT id, ${seq} AS seq FROM orders ORDER BY id` }
        case 1:
          return {
            sql: `SELECT id, ${seq} AS seq FROM orders WHERE id > $1 ORDER BY id`,
            params: [0],
          }
        case 2:
          return {
            sql: `BEGIN; SELECT id, ${seq} AS seq FROM orders ORDER BY id; COMMIT`,
          }
        default:
          return { sql: `DELETE FROM orders WHERE id = ${seq}` }
      }
    })
    await until(() => load.outcomes.length > 1000, 60_000)
    upstream.restart()
    await sleep(1500)
    storeCluster.restart()
    const after = load.outcomes.length
    await until(() => load.outcomes.length > after + 2000, 60_000)
    await load.stop()
    const answers = load.outcomes
    for (const o of answers) {
      if (o.sql.startsWith('DELETE')) {
        expect([false]).toContain(o.ok)
        if (o.code !== undefined) expect(['25006', '08006', '57P01', '57P03']).toContain(o.code)
      } else if (o.ok) {
        if (!o.sql.startsWith('BEGIN')) expect(o.rows).toEqual(ALICE_IDS)
      } else expect([undefined, '08006', '57P01', '57P03', '53300']).toContain(o.code)
    }
    expect(answers.filter((o) => o.ok).length).toBeGreaterThan(1000)
    // The upstream restart was felt: statements in flight then failed cleanly.
    expect(answers.some((o) => !o.ok && !o.sql.startsWith('DELETE'))).toBe(true)
    await expectAudited(store, answers)
    // The proxy is still up and serves a new client.
    await expectServesNewClient(dataPlane.port)
    const { failed, dropped } = store.audit.queries.writer.stats
    expect(failed + dropped).toBe(0)
  }, 240_000)
})
