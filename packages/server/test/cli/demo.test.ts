import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { type Demo, startDemo } from '../../src/cli/demo.js'
import { main } from '../../src/cli/main.js'
import { createLogger } from '../../src/logging/logger.js'

/** Collects the JSON log lines the demo writes. */
function logSink(): { lines: Record<string, unknown>[]; stream: Writable } {
  const lines: Record<string, unknown>[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line))
      done()
    },
  })
  return { lines, stream }
}

describe('palisade demo', () => {
  let demo: Demo
  const logs = logSink()
  const clients: pg.Client[] = []

  async function connect(username: string): Promise<pg.Client> {
    const user = demo.users.find((u) => u.username === username)
    const client = new pg.Client({
      host: demo.server.dataPlane.host,
      port: demo.server.dataPlane.port,
      user: username,
      password: user?.password ?? '',
      database: demo.database,
    })
    clients.push(client)
    await client.connect()
    return client
  }

  beforeAll(async () => {
    demo = await startDemo({
      dataPort: 0,
      adminPort: 0,
      logger: createLogger({ level: 'info', destination: logs.stream }),
    })
  })
  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.end()))
    await demo?.close()
  })

  it('prints psql lines for both users and the admin curl lines', () => {
    const port = demo.server.dataPlane.port
    expect(demo.instructions).toContain(`postgresql://alice:Demo-pass-1@127.0.0.1:${port}/shop`)
    expect(demo.instructions).toContain(`postgresql://bob:Demo-pass-1@127.0.0.1:${port}/shop`)
    expect(demo.instructions).toContain(`${demo.server.admin.url}/api/v1/auth/login`)
    expect(demo.instructions).toContain(`${demo.server.admin.url}/api/v1/audit/queries`)
  })

  it('shows each user only their tenant, with masked emails and no ssn column', async () => {
    const alice = await connect('alice')
    const a = await alice.query('SELECT * FROM customers ORDER BY id')
    expect(a.fields.map((f) => f.name)).toEqual(['id', 'tenant', 'name', 'email'])
    expect(a.rows).toEqual([
      { id: 1, tenant: 'acme', name: 'Ann Archer', email: 'a***@acme.example' },
      { id: 2, tenant: 'acme', name: 'Abe Adams', email: 'a***@acme.example' },
    ])
    const bob = await connect('bob')
    const b = await bob.query('SELECT id, tenant, email FROM customers ORDER BY id')
    expect(b.rows).toEqual([
      { id: 3, tenant: 'globex', email: 'g***@globex.example' },
      { id: 4, tenant: 'globex', email: 'g***@globex.example' },
    ])
    const orders = await bob.query('SELECT count(*)::int AS n FROM orders')
    expect(orders.rows).toEqual([{ n: 2 }])
    const tenants = await alice.query('SELECT tenant FROM tenants')
    expect(tenants.rows).toEqual([{ tenant: 'acme' }])
    await expect(alice.query('SELECT ssn FROM customers')).rejects.toMatchObject({ code: '42501' })
    // Grouping by the primary key discovery recorded: the other columns stay selectable.
    const perCustomer = await alice.query(
      'SELECT c.id, c.name, count(o.id)::int AS n FROM customers c LEFT JOIN orders o ON o.customer_id = c.id GROUP BY c.id ORDER BY c.id',
    )
    expect(perCustomer.rows).toEqual([
      { id: 1, name: 'Ann Archer', n: 2 },
      { id: 2, name: 'Abe Adams', n: 1 },
    ])
  })

  it('lets the admin log in over HTTP and read the query audit', async () => {
    const api = `${demo.server.admin.url}/api/v1`
    const login = await fetch(`${api}/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(demo.admin),
    })
    expect(login.status).toBe(200)
    const { token } = (await login.json()) as { token: string }
    await demo.server.store.audit.queries.flush()
    const audit = await fetch(`${api}/audit/queries?limit=50`, {
      headers: { Authorization: `Bearer ${token}` },
    })
    expect(audit.status).toBe(200)
    const body = (await audit.json()) as { data: { username: string; status: string }[] }
    expect(body.data.map((r) => r.username)).toContain('alice')
    expect(body.data.map((r) => r.username)).toContain('bob')
  })

  it('logs connections and admin requests as JSON without secrets', async () => {
    const connects = logs.lines.filter((l) => l['event'] === 'connect')
    expect(connects.map((l) => l['user'])).toEqual(expect.arrayContaining(['alice', 'bob']))
    expect(connects[0]).toMatchObject({ datasource: 'shop', plane: 'data' })
    const requests = logs.lines.filter((l) => l['event'] === 'request')
    expect(requests).toContainEqual(
      expect.objectContaining({ method: 'POST', path: '/api/v1/auth/login', status: 200 }),
    )
    expect(requests[0]?.['request_id']).toEqual(expect.any(String))
    const text = JSON.stringify(logs.lines)
    expect(text).not.toContain(demo.admin.password)
    expect(text).not.toContain('Demo-pass-1')
    expect(text).not.toContain('Bearer')
  })

  it('previews a query as alice from the CLI, signed in with the admin credentials', async () => {
    const printed: string[] = []
    const spy = vi.spyOn(console, 'log').mockImplementation((line: unknown) => {
      printed.push(String(line))
    })
    const env = {
      PALISADE_ADMIN_USERNAME: demo.admin.username,
      PALISADE_ADMIN_PASSWORD: demo.admin.password,
    }
    try {
      const args = ['--as', 'alice', '--datasource', 'shop', '--admin-url', demo.server.admin.url]
      const code = await main(
        ['preview', ...args, '--execute', 'SELECT id, email FROM customers ORDER BY id'],
        env,
      )
      expect(code).toBe(0)
      const text = printed.join('\n')
      expect(text).toContain('alice on shop: allowed')
      expect(text).toContain('-- policies: ')
      expect(text).toContain('a***@acme.example')
      expect(text).not.toContain('globex')
      expect(text).toContain('(2 rows)')
      printed.length = 0
      expect(await main(['preview', ...args, 'SELECT ssn FROM customers'], env)).toBe(3)
      expect(printed.join('\n')).toContain(
        'ERROR:  permission denied for column(s): ssn  (SQLSTATE 42501)',
      )
    } finally {
      spy.mockRestore()
    }
  })

  it('verifies the audit chains and exports the query audit from the CLI', async () => {
    const printed: string[] = []
    const spy = vi.spyOn(console, 'log').mockImplementation((line: unknown) => {
      printed.push(String(line))
    })
    const env = {
      PALISADE_ADMIN_USERNAME: demo.admin.username,
      PALISADE_ADMIN_PASSWORD: demo.admin.password,
    }
    const dir = await mkdtemp(join(tmpdir(), 'palisade-audit-export-'))
    try {
      const url = ['--admin-url', demo.server.admin.url]
      expect(await main(['audit', 'verify', ...url], env)).toBe(0)
      expect(printed.join('\n')).toMatch(/query audit: \d+ entries in 1 chain/)
      expect(printed.join('\n')).toContain('OK: every chain holds')
      const file = join(dir, 'queries.csv')
      const args = ['audit', 'export', 'queries', '--format', 'csv', '--output', file]
      expect(await main([...args, ...url], env)).toBe(0)
      const csv = await readFile(file, 'utf8')
      expect(csv.split('\r\n')[0]).toContain('original_query')
      expect(csv).toContain('SELECT * FROM customers ORDER BY id')
    } finally {
      spy.mockRestore()
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('simulates a proposed column deny over the audited queries from the CLI', async () => {
    const printed: string[] = []
    const spy = vi.spyOn(console, 'log').mockImplementation((line: unknown) => {
      printed.push(String(line))
    })
    const env = {
      PALISADE_ADMIN_USERNAME: demo.admin.username,
      PALISADE_ADMIN_PASSWORD: demo.admin.password,
    }
    const dir = await mkdtemp(join(tmpdir(), 'palisade-simulate-'))
    try {
      const changes = join(dir, 'changes.json')
      await writeFile(
        changes,
        JSON.stringify({
          create_policies: [
            {
              ref: 'deny',
              name: 'no-email',
              policy_type: 'column_deny',
              targets: [{ schemas: ['public'], tables: ['customers'], columns: ['email'] }],
            },
          ],
          assign: [{ policy_ref: 'deny', scope: 'all' }],
        }),
      )
      const args = ['simulate', '--datasource', 'shop', '--changes', changes]
      expect(await main([...args, '--admin-url', demo.server.admin.url], env)).toBe(0)
      const text = printed.join('\n')
      expect(text).toMatch(/^shop: \d+ statements of \d+ users replayed/)
      expect(text).toContain('SELECT * FROM customers ORDER BY id')
      expect(text).toContain('columns removed: customers.email, email')
    } finally {
      spy.mockRestore()
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('exports the policy bundle and plans a change to it from the CLI', async () => {
    const printed: string[] = []
    const spy = vi.spyOn(console, 'log').mockImplementation((line: unknown) => {
      printed.push(String(line))
    })
    const env = {
      PALISADE_ADMIN_USERNAME: demo.admin.username,
      PALISADE_ADMIN_PASSWORD: demo.admin.password,
    }
    const dir = await mkdtemp(join(tmpdir(), 'palisade-bundle-'))
    try {
      const url = ['--admin-url', demo.server.admin.url]
      const file = join(dir, 'shop.yaml')
      expect(await main(['export', '--datasource', 'shop', '--output', file, ...url], env)).toBe(0)
      const text = await readFile(file, 'utf8')
      expect(text).toContain('version: palisade.policy-bundle/v1')
      expect(text).toContain('filter_expression: tenant = {user.tenant}')
      expect(await main(['apply', file, '--dry-run', ...url], env)).toBe(0)
      expect(printed.at(-1)).toBe('nothing to change: the store already matches the bundle')
      await writeFile(file, text.replace('tenant = {user.tenant}', "tenant = 'acme'"))
      expect(await main(['apply', file, '--dry-run', ...url], env)).toBe(0)
      expect(printed.at(-1)).toBe(
        [
          'plan (dry run, nothing changed): 0 to create, 1 to update, 0 to delete',
          '  ~ policy tenant-isolation (filter_expression)',
        ].join('\n'),
      )
    } finally {
      spy.mockRestore()
      await rm(dir, { recursive: true, force: true })
    }
  })
})
