import { PGlite } from '@electric-sql/pglite'
import type { SaveColumnInput, SaveSchemaInput, SaveTableInput, Store } from '@palisade/store'

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

/** Reads the upstream's tables and columns (schema `public`) the way discovery would. */
export async function readCatalog(initSql: string): Promise<SaveSchemaInput[]> {
  const db = new PGlite()
  try {
    await db.exec(initSql)
    const { rows } = await db.query<{
      table_name: string
      column_name: string
      ordinal_position: number
      data_type: string
      is_nullable: string
      column_default: string | null
    }>(`SELECT table_name, column_name, ordinal_position, data_type, is_nullable, column_default
        FROM information_schema.columns WHERE table_schema = 'public'
        ORDER BY table_name, ordinal_position`)
    const tables = new Map<string, SaveTableInput & { columns: SaveColumnInput[] }>()
    for (const r of rows) {
      let table = tables.get(r.table_name)
      if (!table) {
        table = { table_name: r.table_name, is_selected: true, columns: [] }
        tables.set(r.table_name, table)
      }
      table.columns.push({
        column_name: r.column_name,
        ordinal_position: Number(r.ordinal_position),
        data_type: r.data_type,
        is_nullable: r.is_nullable === 'YES',
        column_default: r.column_default,
        is_selected: true,
      })
    }
    return [{ schema_name: 'public', is_selected: true, tables: [...tables.values()] }]
  } finally {
    await db.close()
  }
}

/** Seeds the demo: datasource `shop`, its catalog, two tenant users and three policies. */
export async function seedDemo(
  store: Store,
  adminId: string,
  password: string,
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
    { name: 'shop', ds_type: 'pglite', access_mode: 'open', config: { init_sql: DEMO_SHOP_SQL } },
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
