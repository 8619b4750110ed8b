/**
 * Test fixture: the app's schema on an in-memory PGlite, and a `Query` that sends every
 * statement through Palisade's rewrite for one user before running it.
 */
import { PGlite } from '@electric-sql/pglite'
import {
  type Catalog,
  type CompiledSession,
  compileSession,
  type EffectivePolicy,
  rewrite,
  type SessionUser,
} from '@palisade/core'
import type { Query } from '../src/shop.js'

const SCHEMA = `
  CREATE TABLE customers (id int PRIMARY KEY, tenant_id int NOT NULL, name text NOT NULL,
                          email text NOT NULL, ssn text NOT NULL);
  CREATE TABLE orders (id int PRIMARY KEY, tenant_id int NOT NULL,
                       customer_id int NOT NULL REFERENCES customers, amount int NOT NULL);
  INSERT INTO customers VALUES
    (1, 1, 'Ann Archer', 'ann@acme.test', '111-11-1111'),
    (2, 1, 'Abe Adams', 'abe@acme.test', '222-22-2222'),
    (3, 2, 'Gus Grant', 'gus@globex.test', '333-33-3333');
  INSERT INTO orders VALUES (10, 1, 1, 25), (11, 1, 1, 15), (12, 1, 2, 40), (20, 2, 3, 70);
`

/** The policies under test, the same for every user: `{user.tenant}` makes them per tenant. */
export const POLICIES: EffectivePolicy[] = [
  {
    id: 'tenant-rows',
    name: 'tenant rows',
    version: 1,
    type: 'row_filter',
    priority: 100,
    targets: [{ schemas: ['public'], tables: ['customers', 'orders'] }],
    filterExpression: 'tenant_id = {user.tenant}',
  },
  {
    id: 'email-mask',
    name: 'email mask',
    version: 1,
    type: 'column_mask',
    priority: 100,
    targets: [{ schemas: ['public'], tables: ['customers'], columns: ['email'] }],
    maskExpression: "left(email, 1) || '***@' || split_part(email, '@', 2)",
  },
  {
    id: 'ssn-deny',
    name: 'ssn deny',
    version: 1,
    type: 'column_deny',
    priority: 100,
    targets: [{ schemas: ['public'], tables: ['customers'], columns: ['ssn'] }],
  },
]

/** A fresh in-memory database with the app's schema and a few rows of two tenants. */
export async function createShopDb(): Promise<PGlite> {
  const db = new PGlite()
  await db.exec(SCHEMA)
  return db
}

/** The exposed catalog, read from the database the way an admin's discovery would. */
export async function readCatalog(db: PGlite): Promise<Catalog> {
  const { rows } = await db.query<{ table_name: string; column_name: string; type: string }>(
    `SELECT c.relname AS table_name, a.attname AS column_name,
            format_type(a.atttypid, a.atttypmod) AS type
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
      WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r'
        AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY c.relname, a.attnum`,
  )
  const tables = new Map<string, { name: string; type: string }[]>()
  for (const r of rows) {
    const columns = tables.get(r.table_name) ?? []
    columns.push({ name: r.column_name, type: r.type })
    tables.set(r.table_name, columns)
  }
  const list = [...tables].map(([name, columns]) => ({ name, columns }))
  return { schemas: [{ name: 'public', tables: list }] }
}

/** Compiles the session Palisade would build for `user` on this datasource. */
export function sessionFor(user: SessionUser, catalog: Catalog): Promise<CompiledSession> {
  return compileSession({
    user,
    datasource: { name: 'shop', accessMode: 'open' },
    catalog,
    attributeDefinitions: [{ key: 'tenant', valueType: 'integer', defaultValue: null }],
    policies: POLICIES,
  })
}

/**
 * The app's `Query` as `session`'s user: rewrite (which throws a `PalisadeError` with the
 * SQLSTATE the proxy would send), then run the rewritten SQL with the same parameters.
 */
export function queryAs(db: PGlite, session: CompiledSession): Query {
  return async <Row>(sql: string, params: readonly unknown[] = []) => {
    const [statement, ...rest] = rewrite(sql, session).statements
    if (!statement || rest.length > 0) throw new Error('expected exactly one statement')
    const result = await db.query<Row>(statement.sql, [...params])
    return result.rows
  }
}
