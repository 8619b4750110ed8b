import { fileURLToPath } from 'node:url'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AuditBatchBuilder } from '../src/audit/audit-batch.js'
import { openPgliteDriver } from '../src/drivers/pglite.js'
import { isStoreUnreachable, rowsOf, type StoreDriver, sqlStateOf } from '../src/kernel/db.js'

/** The embedded store's PGlite runs on a thread of its own (docs/store.md). */
describe('embedded store on its own thread', () => {
  let driver: StoreDriver

  beforeAll(async () => {
    driver = await openPgliteDriver()
    await driver.db.execute(sql`CREATE TABLE t (id int PRIMARY KEY, at timestamptz, n bigint)`)
  })
  afterAll(async () => {
    await driver.close()
  })

  it('keeps the serving thread free while the store works', async () => {
    // A statement that keeps PostgreSQL busy for a while: on the calling thread it would stop
    // every timer (and every client's relay) until it finished.
    let ticks = 0
    let longestGap = 0
    let last = performance.now()
    const timer = setInterval(() => {
      const now = performance.now()
      longestGap = Math.max(longestGap, now - last)
      last = now
      ticks++
    }, 5)
    const started = performance.now()
    const rows = await rowsOf<{ n: string }>(
      driver.db.execute(sql`SELECT sum(x % 7)::text AS n FROM generate_series(1, 3000000) x`),
    )
    const took = performance.now() - started
    clearInterval(timer)
    expect(rows[0]?.n).toBe('8999997')
    expect(took).toBeGreaterThan(200)
    expect(ticks).toBeGreaterThan(took / 50)
    expect(longestGap).toBeLessThan(took / 2)
  })

  it('keeps the SQLSTATE and constraint of an error, and values as drizzle reads them', async () => {
    await driver.db.execute(sql`INSERT INTO t VALUES (1, '2026-01-02T03:04:05Z', 9007199254740993)`)
    const error = await driver.db.execute(sql`INSERT INTO t VALUES (1, now(), 0)`).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(sqlStateOf(error)).toBe('23505')
    expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).toContain('t_pkey')
    const [row] = await rowsOf<{ at: string; n: unknown }>(
      driver.db.execute(sql`SELECT at, n FROM t WHERE id = 1`),
    )
    // Timestamps stay text (drizzle's parsers), 64-bit integers keep every digit.
    expect(typeof row?.at).toBe('string')
    expect(String(row?.n)).toBe('9007199254740993')
  })

  it('runs a transaction alone: others wait for it, and a failed one leaves nothing', async () => {
    const order: string[] = []
    let release!: () => void
    const held = new Promise<void>((r) => {
      release = r
    })
    const tx = driver.db.transaction(async (t) => {
      await t.execute(sql`INSERT INTO t VALUES (2, now(), 2)`)
      order.push('inserted')
      await held
      order.push('committing')
    })
    // Let the transaction begin and insert before the outside read is sent.
    while (order.length === 0) await new Promise((r) => setTimeout(r, 5))
    const outside = rowsOf<{ n: number }>(
      driver.db.execute(sql`SELECT count(*)::int AS n FROM t WHERE id = 2`),
    ).then((rows) => {
      order.push('read')
      return rows[0]?.n
    })
    await new Promise((r) => setTimeout(r, 50))
    release()
    await tx
    // The read waited for the commit, then saw its row.
    expect(await outside).toBe(1)
    expect(order).toEqual(['inserted', 'committing', 'read'])

    const failed = await driver.db
      .transaction(async (t) => {
        await t.execute(sql`INSERT INTO t VALUES (3, now(), 3)`)
        await t.execute(sql`INSERT INTO t VALUES (3, now(), 3)`)
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    expect(sqlStateOf(failed)).toBe('23505')
    const [left] = await rowsOf<{ n: number }>(
      driver.db.execute(sql`SELECT count(*)::int AS n FROM t WHERE id = 3`),
    )
    expect(left?.n).toBe(0)
    // The store answers normally after the rollback.
    const [after] = await rowsOf<{ n: number }>(driver.db.execute(sql`SELECT 1 AS n`))
    expect(after?.n).toBe(1)
  })

  it('snapshots and reopens its data directory through the thread', async () => {
    const snapshot = await driver.dump?.()
    expect(snapshot?.size).toBeGreaterThan(0)
    const copy = await openPgliteDriver({ loadDataDir: snapshot })
    try {
      const [row] = await rowsOf<{ n: number }>(
        copy.db.execute(sql`SELECT count(*)::int AS n FROM t`),
      )
      expect(row?.n).toBe(2)
    } finally {
      await copy.close()
    }
  })

  it('answers "unreachable" once closed, never hangs', async () => {
    const other = await openPgliteDriver()
    await other.close()
    const error = await other.db.execute(sql`SELECT 1`).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(isStoreUnreachable(error)).toBe(true)
  })
})

/** Query-audit batches stored on the embedded store's thread (audit-ingest.ts, pglite-thread.ts). */
describe('query audit on the embedded store thread', () => {
  let driver: StoreDriver

  beforeAll(async () => {
    driver = await openPgliteDriver()
    await driver.migrate(fileURLToPath(new URL('../drizzle', import.meta.url)))
  })
  afterAll(async () => {
    await driver.close()
  })

  const batchOf = (...statements: string[]) => {
    const builder = new AuditBatchBuilder(statements.length)
    for (const statement of statements) {
      builder.add({
        user_id: '0190f000-0000-7000-8000-0000000000a1',
        username: 'u',
        data_source_id: '0190f000-0000-7000-8000-0000000000d1',
        datasource_name: 'd',
        original_query: statement,
        status: 'success',
      })
    }
    const batch = builder.take()
    if (!batch) throw new Error('empty batch')
    return batch
  }
  const stored = async (statement: string) =>
    (
      await rowsOf<{ n: number }>(
        driver.db.execute(
          sql`SELECT count(*)::int AS n FROM query_audit_chunks c, query_audit_texts t
            WHERE t.digest = ANY (c.texts) AND t.body = ${statement}`,
        ),
      )
    )[0]?.n

  it('stores a batch sent during another transaction outside it: its rollback keeps the batch', async () => {
    const sink = await driver.auditSink(Buffer.alloc(32, 7), crypto.randomUUID())
    let release!: () => void
    const held = new Promise<void>((r) => {
      release = r
    })
    let inside = false
    const rolledBack = driver.db
      .transaction(async (t) => {
        await t.execute(sql`SELECT 1`)
        inside = true
        await held
        throw new Error('roll back')
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    while (!inside) await new Promise((r) => setTimeout(r, 5))
    let written = false
    const writing = sink.write(batchOf('SELECT during a transaction')).then(() => {
      written = true
    })
    await new Promise((r) => setTimeout(r, 50))
    // The batch waits for the transaction rather than joining it.
    expect(written).toBe(false)
    release()
    expect(String(await rolledBack)).toContain('roll back')
    await writing
    expect(await stored('SELECT during a transaction')).toBe(1)
  })

  it('keeps storing after a batch fails, and stores a batch sent twice once', async () => {
    const sink = await driver.auditSink(undefined, crypto.randomUUID())
    const bad = batchOf('SELECT after a failure')
    // A seed that is not a UUID fails the statement on its first parameter.
    const failed = await sink.write({ ...bad, seed: 'not a uuid' }).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(sqlStateOf(failed)).toBe('22P02')
    const twice = batchOf('SELECT sent twice')
    await sink.write(twice)
    // The answer to the first attempt "was lost": the same batch again is counted stored.
    await sink.write(twice)
    expect(await stored('SELECT sent twice')).toBe(1)
    await sink.write(bad)
    expect(await stored('SELECT after a failure')).toBe(1)
  })
})
