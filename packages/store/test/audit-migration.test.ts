/**
 * Migration 0014 moves the row-per-entry query audit (`query_audit_log`) into batches of
 * format 1: every entry reads back as it was, keeps its HMAC link, and verify still holds.
 */
import { randomBytes } from 'node:crypto'
import { rm } from 'node:fs/promises'
import { sql } from 'drizzle-orm'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { CHAIN_KEY_PURPOSE, canonicalQueryEntry, chainHash } from '../src/audit/audit-chain.js'
import { openPostgresDriver } from '../src/drivers/postgres.js'
import {
  createStore,
  type ExportedQueryAuditEntry,
  type QueryAuditFilter,
  type Store,
} from '../src/index.js'
import { rowsOf, type StoreDriver } from '../src/kernel/db.js'
import { parseSecretKey, SecretBox } from '../src/kernel/secret-box.js'
import { migrationsUpTo, pgliteStoreUpgradedFrom } from './fixtures/migrations.js'
import { TEST_SECRET_KEY } from './fixtures/pglite.js'

const U1 = '0190f000-0000-7000-8000-0000000000a1'
const U2 = '0190f000-0000-7000-8000-0000000000a2'
const D1 = '0190f000-0000-7000-8000-0000000000d1'
const D2 = '0190f000-0000-7000-8000-0000000000d2'
const POLICY = '0190f000-0000-7000-8000-0000000000b1'
const BASE = Date.parse('2026-01-10T10:00:00Z')

/** A row of the row-per-entry log as earlier versions wrote it. */
interface LegacyRow {
  id: string
  user_id: string
  username: string
  data_source_id: string
  datasource_name: string
  original_query: string
  rewritten_query: string | null
  policies_applied: string
  execution_time_ms: number | null
  client_info: string | null
  status: 'success' | 'error' | 'denied'
  error_message: string | null
  created_at: string
  shadow_policies: string | null
  shadow_denied: boolean | null
  chain_id: string | null
  chain_seq: number | null
  prev_hash: string | null
  hash: string | null
}

/**
 * 502 entries of chain A (two batches after the move), 3 of chain B interleaved with them, and
 * two unlinked entries written before chaining began.
 */
function legacyRows(key: Buffer): LegacyRow[] {
  const rows: LegacyRow[] = []
  const heads = new Map<string, { seq: number; hash: string }>()
  const add = (n: number, at: number, chain: string | null) => {
    const status = (['success', 'error', 'denied'] as const)[n % 3] as LegacyRow['status']
    const row: LegacyRow = {
      id: `0190f000-0000-7000-8000-${n.toString(16).padStart(12, '0')}`,
      user_id: n % 2 ? U2 : U1,
      username: n % 2 ? 'two' : 'one',
      data_source_id: n % 5 ? D1 : D2,
      datasource_name: n % 5 ? 'shop' : 'books',
      original_query: `SELECT ${n % 40} FROM t`,
      rewritten_query: status === 'success' ? `SELECT ${n % 40} FROM (SELECT 1) t` : null,
      policies_applied:
        n % 4
          ? '[]'
          : JSON.stringify([{ policy_id: POLICY, version: 1, name: 'p', decision: null }]),
      execution_time_ms: status === 'denied' ? null : n % 17,
      client_info: n % 3 ? 'psql' : null,
      status,
      error_message: status === 'success' ? null : `failed ${n % 6}`,
      created_at: new Date(at).toISOString(),
      shadow_policies:
        n % 7 ? null : JSON.stringify([{ policy_id: POLICY, version: 2, name: 'shadow' }]),
      shadow_denied: n % 7 ? null : n % 14 === 0,
      chain_id: chain,
      chain_seq: null,
      prev_hash: null,
      hash: null,
    }
    if (chain) {
      const head = heads.get(chain) ?? { seq: 0, hash: '' }
      const canonical = canonicalQueryEntry({
        id: row.id,
        userId: row.user_id,
        username: row.username,
        dataSourceId: row.data_source_id,
        datasourceName: row.datasource_name,
        originalQuery: row.original_query,
        rewrittenQuery: row.rewritten_query,
        policiesApplied: row.policies_applied,
        executionTimeMs: row.execution_time_ms,
        clientInfo: row.client_info,
        status: row.status,
        errorMessage: row.error_message,
        createdAt: new Date(at),
      })
      row.chain_seq = head.seq + 1
      row.prev_hash = head.hash
      row.hash = chainHash(key, head.hash, canonical)
      heads.set(chain, { seq: row.chain_seq, hash: row.hash })
    }
    rows.push(row)
  }
  add(1, BASE - 20_000, null)
  add(2, BASE - 19_000, null)
  for (let k = 0; k < 502; k++) {
    add(10 + k, BASE + k * 1000, 'chain-a')
    if (k < 3) add(1000 + k, BASE + k * 1000 + 500, 'chain-b')
  }
  return rows
}

async function insertLegacy(driver: StoreDriver, rows: LegacyRow[]) {
  await driver.db.execute(
    sql`INSERT INTO query_audit_log
      SELECT * FROM json_populate_recordset(NULL::query_audit_log, ${JSON.stringify(rows)}::json)`,
  )
}

const key = new SecretBox(parseSecretKey(TEST_SECRET_KEY)).derive(CHAIN_KEY_PURPOSE)

/** The checks, on a store migrated from a log holding `legacyRows`. */
async function checkMigrated(store: Store, rows: LegacyRow[]) {
  const chunks = await rowsOf<{
    format: number
    chain_id: string | null
    first_seq: number | null
    entries: number
  }>(
    store.db.execute(sql`SELECT format, chain_id, first_seq::int AS first_seq, entries
      FROM query_audit_chunks ORDER BY chain_id NULLS FIRST, first_seq`),
  )
  expect(chunks.map((c) => [c.format, c.chain_id, c.first_seq, c.entries])).toEqual([
    [1, null, null, 2],
    [1, 'chain-a', 1, 500],
    [1, 'chain-a', 501, 2],
    [1, 'chain-b', 1, 3],
  ])
  const exportAll = async (filter: QueryAuditFilter = {}) => {
    const out: ExportedQueryAuditEntry[] = []
    for await (const row of store.audit.queries.export(filter)) out.push(row)
    return out
  }
  const byTime = [...rows].sort((a, b) => (a.created_at < b.created_at ? -1 : 1))
  const exported = await exportAll()
  // Every field as it was, links included (format 1 keeps each entry's HMAC link).
  expect(exported).toEqual(byTime)
  const list = await store.audit.queries.list({ page: 2, page_size: 7 })
  expect(list.total).toBe(rows.length)
  expect(list.data).toEqual(
    [...byTime]
      .reverse()
      .slice(7, 14)
      .map(({ chain_id, chain_seq, prev_hash, hash, ...entry }) => entry),
  )
  const denied = rows.filter((r) => r.user_id === U2 && r.status === 'denied')
  const page = await store.audit.queries.list({ user_id: U2, status: 'denied', page_size: 200 })
  expect([page.total, page.data.length]).toEqual([denied.length, denied.length])
  const windowed = await store.audit.queries.list({
    from: new Date(BASE + 100_500),
    to: new Date(BASE + 110_000),
    datasource_id: D1,
  })
  expect(windowed.data.map((r) => r.id)).toEqual(
    byTime
      .filter(
        (r) =>
          r.data_source_id === D1 &&
          Date.parse(r.created_at) >= BASE + 100_500 &&
          Date.parse(r.created_at) <= BASE + 110_000,
      )
      .reverse()
      .map((r) => r.id),
  )
  expect(windowed.total).toBe(windowed.data.length)
  const shadow = await store.audit.queries.shadowReport(POLICY, { examples: 3 })
  const shadowed = rows.filter((r) => r.shadow_policies !== null)
  expect([shadow.statements, shadow.would_deny]).toEqual([
    shadowed.length,
    shadowed.filter((r) => r.shadow_denied).length,
  ])
  expect(shadow.examples.map((e) => [e.id, e.original_query, e.would_deny])).toEqual(
    [...shadowed]
      .sort((a, b) => (a.created_at < b.created_at ? 1 : -1))
      .slice(0, 3)
      .map((r) => [r.id, r.original_query, r.shadow_denied === true]),
  )
  const verified = await store.audit.verify()
  expect(verified.first_broken).toBeNull()
  expect(verified.logs.find((l) => l.log === 'queries')).toMatchObject({
    entries: rows.length - 2,
    chains: 2,
    unchained: 2,
  })
  // New entries go into a chain of their own, beside the moved ones.
  store.audit.queries.write({
    user_id: U1,
    username: 'one',
    data_source_id: D1,
    datasource_name: 'shop',
    original_query: 'SELECT after',
    status: 'success',
  })
  await store.audit.queries.flush()
  const after = (await exportAll()).at(-1)
  expect([after?.original_query, after?.chain_seq, after?.prev_hash]).toEqual([
    'SELECT after',
    1,
    '',
  ])
  expect((await store.audit.verify()).logs.find((l) => l.log === 'queries')?.chains).toBe(3)
  // A moved entry changed behind Palisade breaks at that entry.
  const target = byTime.find((r) => r.chain_id === 'chain-a' && r.chain_seq === 501) as LegacyRow
  await store.db.execute(sql`ALTER TABLE query_audit_chunks DISABLE TRIGGER USER`)
  await store.db.execute(
    sql`UPDATE query_audit_chunks SET e_elapsed[1] = 999 WHERE chain_id = 'chain-a' AND first_seq = 501`,
  )
  await store.db.execute(sql`ALTER TABLE query_audit_chunks ENABLE TRIGGER USER`)
  const broken = await store.audit.verify()
  expect(broken.first_broken).toMatchObject({
    log: 'queries',
    chain_id: 'chain-a',
    chain_seq: 501,
    entry_id: target.id,
  })
  expect(broken.first_broken?.reason).toMatch(/changed after it was written/)
}

describe('query audit moved into batches by migration 0014', () => {
  it('on embedded PGlite', async () => {
    const rows = legacyRows(key)
    const store = await pgliteStoreUpgradedFrom('0013_catalog_tags', (driver) =>
      insertLegacy(driver, rows),
    )
    try {
      await checkMigrated(store, rows)
    } finally {
      await store.close()
    }
  }, 120_000)

  const url = process.env['PALISADE_TEST_PG_URL']
  const databases: string[] = []
  afterAll(async () => {
    if (!url || databases.length === 0) return
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    try {
      for (const name of databases)
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    } finally {
      await admin.end()
    }
  })

  it.skipIf(!url)(
    'on PostgreSQL',
    async () => {
      const name = `palisade_test_${randomBytes(6).toString('hex')}`
      const admin = new pg.Client({ connectionString: url })
      await admin.connect()
      try {
        await admin.query(`CREATE DATABASE ${name}`)
      } finally {
        await admin.end()
      }
      databases.push(name)
      const target = new URL(url as string)
      target.pathname = `/${name}`
      const databaseUrl = target.toString()
      const folder = await migrationsUpTo('0013_catalog_tags')
      const rows = legacyRows(key)
      const driver = await openPostgresDriver({ databaseUrl })
      try {
        await driver.migrate(folder)
        await insertLegacy(driver, rows)
      } finally {
        await driver.close()
        await rm(folder, { recursive: true, force: true })
      }
      const store = await createStore({ databaseUrl, secretKey: TEST_SECRET_KEY })
      try {
        await checkMigrated(store, rows)
      } finally {
        await store.close()
      }
    },
    120_000,
  )
})
