/**
 * Embed the rewriter: compile a session for one user, rewrite a query and run it on an
 * in-memory PGlite. Run with `pnpm --filter embed-rewriter dev` (after `pnpm build`).
 */
import { PGlite } from '@electric-sql/pglite'
import { compileSession, rewrite } from '@palisade/core'

const db = new PGlite()
await db.exec(`
  CREATE TABLE orders (id int PRIMARY KEY, tenant_id int, email text, amount numeric);
  INSERT INTO orders VALUES (1, 1, 'ann@acme.test', 10), (2, 2, 'bo@globex.test', 20), (3, 1, 'cy@acme.test', 30);
`)

const session = await compileSession({
  user: { id: 'user-1', username: 'ann', roles: [], attributes: { tenant: 1 } },
  datasource: { name: 'shop', accessMode: 'open' },
  catalog: {
    schemas: [
      {
        name: 'public',
        tables: [
          {
            name: 'orders',
            columns: [
              { name: 'id', type: 'integer' },
              { name: 'tenant_id', type: 'integer' },
              { name: 'email', type: 'text' },
              { name: 'amount', type: 'numeric' },
            ],
          },
        ],
      },
    ],
  },
  attributeDefinitions: [{ key: 'tenant', valueType: 'integer', defaultValue: null }],
  policies: [
    {
      id: 'p-tenant',
      name: 'own tenant',
      version: 1,
      type: 'row_filter',
      priority: 100,
      targets: [{ schemas: ['public'], tables: ['orders'] }],
      filterExpression: 'tenant_id = {user.tenant}',
    },
    {
      id: 'p-email',
      name: 'hide emails',
      version: 1,
      type: 'column_mask',
      priority: 100,
      targets: [{ schemas: ['public'], tables: ['orders'], columns: ['email'] }],
      maskExpression: "'***' || right(email, 5)",
    },
  ],
})

const [statement] = rewrite('SELECT id, email, amount FROM orders ORDER BY id', session).statements
if (!statement) throw new Error('no statement')
console.log('upstream SQL:', statement.sql)
console.log('policies applied:', statement.policiesApplied.map((p) => p.name).join(', '))
console.table((await db.query(statement.sql)).rows)
await db.close()
