import { PGlite } from '@electric-sql/pglite'
import type { SaveSchemaInput, SaveTableInput, Store } from '@palisade/store'
import { type QueryReader, readColumns, readRelations } from '../upstream/upstream-catalog.js'

/** The demo upstream: a small shop shared by two tenants. */
export const DEMO_SHOP_SQL = `
CREATE TABLE tenants (tenant text PRIMARY KEY, name text NOT NULL);
CREATE TABLE customers (
  id int PRIMARY KEY, tenant text NOT NULL REFERENCES tenants, name text NOT NULL,
  email text NOT NULL, ssn text NOT NULL);
CREATE TABLE orders (
  id int PRIMARY KEY, tenant text NOT NULL REFERENCES tenants,
  customer_id int NOT NULL REFERENCES customers, total numeric(10,2) NOT NULL, placed_on date NOT NULL);
INSERT INTO tenants VALUES ('acme', 'Acme Corp'), ('globex', 'Globex Inc');
INSERT INTO customers VALUES
  (1, 'acme', 'Ann Archer', 'ann@acme.example', '111-11-1111'),
  (2, 'acme', 'Abe Adams', 'abe@acme.example', '222-22-2222'),
  (3, 'globex', 'Gus Grant', 'gus@globex.example', '333-33-3333'),
  (4, 'globex', 'Gia Gold', 'gia@globex.example', '444-44-4444');
INSERT INTO orders VALUES
  (100, 'acme', 1, 25.00, '2026-01-05'), (101, 'acme', 2, 12.50, '2026-01-06'),
  (102, 'acme', 1, 99.90, '2026-01-09'), (200, 'globex', 3, 40.00, '2026-01-05'),
  (201, 'globex', 4, 7.25, '2026-01-07');
`

/** The demo's data-plane users: one per tenant. */
export const DEMO_USERS = [
  { username: 'alice', tenant: 'acme' },
  { username: 'bob', tenant: 'globex' },
] as const

/** Reads the upstream's relations and columns (schema `public`) with discovery's own readers. */
export async function readCatalog(initSql: string): Promise<SaveSchemaInput[]> {
  const db = new PGlite()
  try {
    await db.exec(initSql)
    const reader: QueryReader = {
      query: async <T>(text: string, params?: unknown[]) => (await db.query<T>(text, params)).rows,
    }
    const relations = await readRelations(reader, ['public'])
    const columns = await readColumns(
      reader,
      relations.map((r) => ({ schema: r.schema_name, table: r.table_name })),
    )
    const tables: SaveTableInput[] = relations.map(({ schema_name: _schema, ...relation }) => ({
      ...relation,
      is_selected: true,
      columns: columns
        .filter((c) => c.table_name === relation.table_name)
        .map(({ schema_name: _s, table_name: _t, ...column }) => ({
          ...column,
          is_selected: true,
        })),
    }))
    return [{ schema_name: 'public', is_selected: true, tables }]
  } finally {
    await db.close()
  }
}

/** Seeds the demo: datasource `shop`, its catalog, two tenant users and three policies. */
export async function seedDemo(
  store: Store,
  adminId: string,
  password: string,
  /** Where the shop lives: by default an in-memory PGlite that runs DEMO_SHOP_SQL. */
  upstream: { ds_type: 'pglite' | 'postgres'; config: Record<string, unknown> } = {
    ds_type: 'pglite',
    config: { init_sql: DEMO_SHOP_SQL },
  },
): Promise<{ datasourceId: string }> {
  await store.attributes.create(
    { key: 'tenant', entity_type: 'user', value_type: 'string' },
    adminId,
  )
  const users = []
  for (const u of DEMO_USERS) {
    const attributes = { tenant: u.tenant }
    users.push(await store.users.create({ username: u.username, password, attributes }, adminId))
  }
  const ds = await store.datasources.create(
    { name: 'shop', access_mode: 'open', ...upstream },
    adminId,
  )
  await store.catalog.saveCatalog(ds.id, await readCatalog(DEMO_SHOP_SQL), adminId)
  await store.access.setUsers(ds.id, { user_ids: users.map((u) => u.id) }, adminId)
  const customers = (columns: string[]) => [{ schemas: ['public'], tables: ['customers'], columns }]
  const policies = [
    {
      name: 'tenant-isolation',
      policy_type: 'row_filter',
      targets: [{ schemas: ['public'], tables: ['tenants', 'customers', 'orders'] }],
      filter_expression: 'tenant = {user.tenant}',
    },
    {
      name: 'email-mask',
      policy_type: 'column_mask',
      targets: customers(['email']),
      mask_expression: "left(email, 1) || '***@' || split_part(email, '@', 2)",
    },
    { name: 'ssn-deny', policy_type: 'column_deny', targets: customers(['ssn']) },
  ]
  for (const body of policies) {
    const policy = await store.policies.create(body, adminId)
    await store.assignments.assign(ds.id, { policy_id: policy.id, scope: 'all' }, adminId)
  }
  return { datasourceId: ds.id }
}
