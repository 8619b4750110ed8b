/** What the proxy benchmarks share: the shop schema, users and a backend without a store. */
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto'
import type { SessionInput } from '@palisade/core'
// The bench package does not list @palisade/server; import its build output directly.
import type { DataPlaneBackend } from '../../packages/server/dist/index.js'

export const PASSWORD = 'bench-Secret-1'

export const SETUP = `
CREATE TABLE customers (id int PRIMARY KEY, tenant int NOT NULL, name text, email text);
CREATE TABLE orders (id int PRIMARY KEY, tenant int NOT NULL, customer_id int, amount numeric);
INSERT INTO customers SELECT g, g % 10, 'name ' || g, 'user' || g || '@example.test'
  FROM generate_series(1, 1000) g;
INSERT INTO orders SELECT g, g % 10, 1 + g % 1000, g * 1.5 FROM generate_series(1, 10000) g;
`

function verifier(password: string) {
  const salt = randomBytes(16)
  const salted = pbkdf2Sync(password, salt, 4096, 32, 'sha256')
  const clientKey = createHmac('sha256', salted).update('Client Key').digest()
  return {
    salt: salt.toString('base64'),
    iterations: 4096,
    storedKey: createHash('sha256').update(clientKey).digest('base64'),
    serverKey: createHmac('sha256', salted).update('Server Key').digest('base64'),
    exists: true,
  }
}

const text = (name: string) => ({ name, type: 'text' })
const int = (name: string) => ({ name, type: 'integer' })

function sessionInput(username: string, withPolicies: boolean): SessionInput {
  return {
    user: { id: `u-${username}`, username, roles: [], attributes: { tenant: 3 } },
    datasource: { id: 'ds-1', name: 'bench', accessMode: 'open' },
    catalog: {
      schemas: [
        {
          name: 'public',
          tables: [
            { name: 'customers', columns: [int('id'), int('tenant'), text('name'), text('email')] },
            {
              name: 'orders',
              columns: [
                int('id'),
                int('tenant'),
                int('customer_id'),
                { name: 'amount', type: 'numeric' },
              ],
            },
          ],
        },
      ],
    },
    attributeDefinitions: [{ key: 'tenant', valueType: 'integer', defaultValue: null }],
    policies: withPolicies
      ? [
          {
            id: 'p-filter',
            name: 'tenant',
            version: 1,
            type: 'row_filter',
            priority: 100,
            targets: [{ schemas: ['public'], tables: ['orders', 'customers'] }],
            filterExpression: 'tenant = {user.tenant}',
          },
          {
            id: 'p-mask',
            name: 'email',
            version: 1,
            type: 'column_mask',
            priority: 100,
            targets: [{ schemas: ['public'], tables: ['customers'], columns: ['email'] }],
            maskExpression: "'***'",
          },
        ]
      : [],
    epoch: 1,
  }
}

/** A backend from hand-written sessions: the bench measures the proxy, not the store. */
export function benchBackend(): DataPlaneBackend {
  const creds = verifier(PASSWORD)
  const sessions: Record<string, SessionInput> = {
    plain: sessionInput('plain', false),
    alice: sessionInput('alice', true),
  }
  return {
    scramCredentials: async () => creds,
    buildSession: async (user) => sessions[user] ?? null,
    rebuildSession: async () => null,
    upstreamConfig: async () => ({
      kind: 'pglite',
      datasourceName: 'bench',
      statementTimeoutMs: 0,
    }),
    audit: () => {},
    onChange: () => () => {},
  }
}
