import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { openPostgresDriver } from '../src/drivers/postgres.js'
import { type ChangeNotice, createStore, type Store } from '../src/index.js'
import { TEST_SECRET_KEY } from './fixtures/pglite.js'
import { bootstrapAdmin, unique } from './helpers.js'
import { runResourceStoreCases, type StoreTestOptions } from './resource-store.cases.js'

const url = process.env['PALISADE_TEST_PG_URL']
const created: string[] = []
const MIGRATIONS = fileURLToPath(new URL('../drizzle', import.meta.url))

/**
 * A fresh database per store, so runs and blocks never see each other's rows: empty, or (with
 * `template`) a copy of that database.
 */
async function freshDatabase(template?: string): Promise<string> {
  const name = `palisade_test_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`)
  } finally {
    await admin.end()
  }
  created.push(name)
  return urlOf(name)
}

function urlOf(name: string): string {
  const target = new URL(url as string)
  target.pathname = `/${name}`
  return target.toString()
}

let migrated: Promise<string> | undefined

/**
 * A database the store's migrations ran on (the driver's migrate, as `createStore` runs it;
 * nothing else), made once per file: each store of the shared cases starts on a copy of it
 * instead of running every migration again, as the PGlite cases start from a snapshot. The
 * tests below that start instances together still start on empty databases.
 */
function migratedTemplate(): Promise<string> {
  migrated ??= (async () => {
    const database = await freshDatabase()
    const name = new URL(database).pathname.slice(1)
    const driver = await openPostgresDriver({ databaseUrl: database })
    try {
      await driver.migrate(MIGRATIONS)
    } finally {
      await driver.close()
    }
    return name
  })()
  return migrated
}

async function dropDatabases(): Promise<void> {
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  try {
    for (const name of created) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  } finally {
    await admin.end()
  }
}

const open = (databaseUrl: string, options: StoreTestOptions = {}) =>
  createStore({ databaseUrl, secretKey: TEST_SECRET_KEY, ...options })

/** Waits until `predicate` holds over the collected notices, or fails after `ms`. */
async function eventually(
  notices: ChangeNotice[],
  predicate: (n: ChangeNotice) => boolean,
  ms = 5000,
) {
  const start = Date.now()
  while (Date.now() - start < ms) {
    if (notices.some(predicate)) return
    await new Promise((r) => setTimeout(r, 20))
  }
  throw new Error(`no matching notice within ${ms} ms: ${JSON.stringify(notices)}`)
}

describe.skipIf(!url)('store on PostgreSQL (PALISADE_TEST_PG_URL)', () => {
  afterAll(dropDatabases)

  runResourceStoreCases(
    async (options) => open(await freshDatabase(await migratedTemplate()), options),
    {
      realConcurrency: true,
    },
  )

  it('survives its connection dropping in the middle of a transaction', async () => {
    const store = await open(await freshDatabase())
    const uncaught: unknown[] = []
    const onUncaught = (error: unknown) => uncaught.push(error)
    process.on('uncaughtException', onUncaught)
    try {
      // The server ends the backend under a checked-out client: the transaction fails, and the
      // socket's error must not escape as an uncaught exception.
      await expect(
        store.db.transaction(async (tx) => {
          await tx.execute('SELECT pg_terminate_backend(pg_backend_pid())')
        }),
      ).rejects.toThrow()
      await new Promise((resolve) => setTimeout(resolve, 200))
      expect(uncaught).toEqual([])
      // The pool opens a new connection for what comes next.
      const admin = await bootstrapAdmin(store)
      expect((await store.users.get(admin.id)).username).toBe(admin.username)
    } finally {
      process.off('uncaughtException', onUncaught)
      await store.close()
    }
  })

  describe('several instances sharing one database', () => {
    it('migrates once when two instances start together', async () => {
      const db = await freshDatabase()
      const stores = await Promise.all([open(db), open(db), open(db)])
      const admin = await bootstrapAdmin(stores[0] as Store)
      expect((await (stores[1] as Store).users.get(admin.id)).id).toBe(admin.id)
      await Promise.all(stores.map((s) => s.close()))
    })

    it('delivers change events to other instances through NOTIFY with ids only', async () => {
      const db = await freshDatabase()
      const [a, b] = [await open(db), await open(db)]
      const seenA: ChangeNotice[] = []
      const seenB: ChangeNotice[] = []
      a.changes.subscribe((n) => seenA.push(n))
      b.changes.subscribe((n) => seenB.push(n))
      const admin = await bootstrapAdmin(a)
      const ds = await a.datasources.create(
        { name: unique('ds'), ds_type: 'pglite', config: {} },
        admin.id,
      )
      await a.access.setAll(ds.id, { enabled: true }, admin.id)
      await eventually(
        seenB,
        (n) => n.type === 'ds' && n.datasourceId === ds.id && n.origin === 'remote',
      )
      expect(seenA).toEqual([{ type: 'ds', datasourceId: ds.id, origin: 'local' }])
      await Promise.all([a.close(), b.close()])
    })

    it('builds sessions on one instance that reflect changes made through another', async () => {
      const db = await freshDatabase()
      const [a, b] = [await open(db), await open(db)]
      const admin = await bootstrapAdmin(a)
      const ds = await a.datasources.create(
        { name: unique('x'), ds_type: 'pglite', config: {} },
        admin.id,
      )
      await a.access.setUsers(ds.id, { user_ids: [admin.id] }, admin.id)
      expect((await b.buildSessionInput(admin.username, ds.name)).policies).toEqual([])
      const policy = await a.policies.create(
        {
          name: unique('p'),
          policy_type: 'table_deny',
          targets: [{ schemas: ['*'], tables: ['t'] }],
        },
        admin.id,
      )
      await a.assignments.assign(ds.id, { policy_id: policy.id }, admin.id)
      await a.catalog.saveCatalog(
        ds.id,
        [{ schema_name: 'app', is_selected: true, tables: [] }],
        admin.id,
      )
      const input = await b.buildSessionInput(admin.username, ds.name)
      expect(input.policies.map((p) => p.id)).toEqual([policy.id])
      expect(input.catalog.schemas.map((s) => s.name)).toEqual(['app'])
      await Promise.all([a.close(), b.close()])
    })

    it('emits everyone once after the listener reconnects', async () => {
      const db = await freshDatabase()
      const store = await open(db)
      const seen: ChangeNotice[] = []
      store.changes.subscribe((n) => seen.push(n))
      const killer = new pg.Client({ connectionString: db })
      await killer.connect()
      await killer.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE application_name LIKE 'palisade-change-listener %' AND datname = current_database()`,
      )
      await killer.end()
      await eventually(seen, (n) => n.type === 'everyone' && n.origin === 'remote')
      expect(seen.filter((n) => n.type === 'everyone')).toHaveLength(1)
      await store.close()
    })
  })
})

describe.skipIf(Boolean(url))('store on PostgreSQL', () => {
  it.skip('needs PALISADE_TEST_PG_URL (e.g. postgresql://postgres@127.0.0.1:5432/test) to run', () => {})
})
