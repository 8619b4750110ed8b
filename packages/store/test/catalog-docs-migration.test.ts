/**
 * Migration 0021 gives every catalog table stored before it its session document: a store
 * upgraded with a saved catalog serves the same session catalog as before, read from them.
 */
import { sql } from 'drizzle-orm'
import { expect, it } from 'vitest'
import { pgliteStoreUpgradedFrom } from './fixtures/migrations.js'

const USER = '0190f000-0000-7000-8000-0000000000a1'
const DS = '0190f000-0000-7000-8000-0000000000d1'
const SCHEMA = '0190f000-0000-7000-8000-0000000000e1'
const ORDERS = '0190f000-0000-7000-8000-0000000000f1'
const RECENT = '0190f000-0000-7000-8000-0000000000f2'

it('fills the session documents of a catalog saved before it', async () => {
  const store = await pgliteStoreUpgradedFrom('0020_statement_limit_counters', async (driver) => {
    // The ids are this file's constants; each statement goes on its own (extended protocol).
    for (const statement of [
      `INSERT INTO users (id, username, scram_verifier) VALUES ('${USER}', 'ann', 'unused')`,
      `INSERT INTO datasources (id, name, ds_type) VALUES ('${DS}', 'shop', 'pglite')`,
      `INSERT INTO datasource_access (id, datasource_id, scope, user_id)
          VALUES ('0190f000-0000-7000-8000-0000000000c1', '${DS}', 'user', '${USER}')`,
      `INSERT INTO catalog_schemas (id, datasource_id, schema_name, schema_alias)
          VALUES ('${SCHEMA}', '${DS}', 'app', 'shop')`,
      `INSERT INTO catalog_tables (id, datasource_id, schema_id, table_name, table_type,
            view_definition, view_reads, primary_key) VALUES
          ('${ORDERS}', '${DS}', '${SCHEMA}', 'orders', 'TABLE', NULL, NULL, '["id"]'),
          ('${RECENT}', '${DS}', '${SCHEMA}', 'recent', 'VIEW', 'SELECT id FROM app.orders',
            '[{"schema":"app","table":"orders"}]', NULL)`,
      `INSERT INTO catalog_columns (id, table_id, column_name, ordinal_position, data_type,
            is_nullable, is_selected) VALUES
          (gen_random_uuid(), '${ORDERS}', 'note', 3, 'text', true, true),
          (gen_random_uuid(), '${ORDERS}', 'id', 1, 'integer', false, true),
          (gen_random_uuid(), '${ORDERS}', 'secret', 2, 'text', true, false),
          (gen_random_uuid(), '${RECENT}', 'id', 1, 'integer', true, true)`,
    ])
      await driver.db.execute(sql.raw(statement))
  })
  try {
    const session = (await store.buildSessionInput('ann', 'shop')).catalog
    expect(session).toEqual(await store.catalog.exposed(DS))
    expect(session.schemas).toEqual([
      {
        name: 'app',
        alias: 'shop',
        tables: [
          {
            name: 'orders',
            kind: 'TABLE',
            primaryKey: ['id'],
            columns: [
              { name: 'id', type: 'integer', nullable: false },
              { name: 'note', type: 'text', nullable: true },
            ],
          },
          {
            name: 'recent',
            kind: 'VIEW',
            definition: 'SELECT id FROM app.orders',
            reads: [{ schema: 'app', table: 'orders' }],
            columns: [{ name: 'id', type: 'integer', nullable: true }],
          },
        ],
      },
    ])
  } finally {
    await store.close()
  }
}, 120_000)
