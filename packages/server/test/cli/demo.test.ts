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

  it('prints psql lines for both users, the admin curl lines and the console address', () => {
    const port = demo.server.dataPlane.port
    expect(demo.instructions).toContain(`postgresql://alice:Demo-pass-1@127.0.0.1:${port}/shop`)
    expect(demo.instructions).toContain(`postgresql://bob:Demo-pass-1@127.0.0.1:${port}/shop`)
    expect(demo.instructions).toContain(`${demo.server.admin.url}/api/v1/auth/login`)
    expect(demo.instructions).toContain(`${demo.server.admin.url}/api/v1/audit/queries`)
    expect(demo.instructions).toContain(`open ${demo.server.admin.url}/ui and sign in as admin`)
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

  /** Runs a CLI client command against the demo's admin API as its admin; what it printed. */
  async function adminCli(args: string[]): Promise<{ code: number; text: string; last: string }> {
    const printed: string[] = []
    const spy = vi.spyOn(console, 'log').mockImplementation((line: unknown) => {
      printed.push(String(line))
    })
    const env = {
      PALISADE_ADMIN_USERNAME: demo.admin.username,
      PALISADE_ADMIN_PASSWORD: demo.admin.password,
    }
    try {
      const code = await main([...args, '--admin-url', demo.server.admin.url], env)
      return { code, text: printed.join('\n'), last: printed.at(-1) ?? '' }
    } finally {
      spy.mockRestore()
    }
  }

  /** Runs `fn` with a fresh temporary directory, removed afterwards. */
  async function inTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
    const dir = await mkdtemp(join(tmpdir(), 'palisade-cli-'))
    try {
      await fn(dir)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }

  it('previews a query as alice from the CLI, signed in with the admin credentials', async () => {
    const args = ['preview', '--as', 'alice', '--datasource', 'shop']
    const allowed = await adminCli([
      ...args,
      '--execute',
      'SELECT id, email FROM customers ORDER BY id',
    ])
    expect(allowed.code).toBe(0)
    expect(allowed.text).toContain('alice on shop: allowed')
    expect(allowed.text).toContain('-- policies: ')
    expect(allowed.text).toContain('a***@acme.example')
    expect(allowed.text).not.toContain('globex')
    expect(allowed.text).toContain('(2 rows)')
    const refused = await adminCli([...args, 'SELECT ssn FROM customers'])
    expect(refused.code).toBe(3)
    expect(refused.text).toContain('ERROR:  permission denied for column(s): ssn  (SQLSTATE 42501)')
  })

  it('verifies the audit chains and exports the query audit from the CLI', async () => {
    const verified = await adminCli(['audit', 'verify'])
    expect(verified.code).toBe(0)
    expect(verified.text).toMatch(/query audit: \d+ entries in 1 chain/)
    expect(verified.text).toContain('OK: every chain holds')
    await inTempDir(async (dir) => {
      const file = join(dir, 'queries.csv')
      const args = ['audit', 'export', 'queries', '--format', 'csv', '--output', file]
      expect((await adminCli(args)).code).toBe(0)
      const csv = await readFile(file, 'utf8')
      expect(csv.split('\r\n')[0]).toContain('original_query')
      expect(csv).toContain('SELECT * FROM customers ORDER BY id')
    })
  })

  it('simulates a proposed column deny over the audited queries from the CLI', async () => {
    await inTempDir(async (dir) => {
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
      const { code, text } = await adminCli([
        'simulate',
        '--datasource',
        'shop',
        '--changes',
        changes,
      ])
      expect(code).toBe(0)
      expect(text).toMatch(/^shop: \d+ statements of \d+ users replayed/)
      expect(text).toContain('SELECT * FROM customers ORDER BY id')
      expect(text).toContain('columns removed: customers.email, email')
    })
  })

  it('exports the policy bundle and plans a change to it from the CLI', async () => {
    await inTempDir(async (dir) => {
      const file = join(dir, 'shop.yaml')
      expect((await adminCli(['export', '--datasource', 'shop', '--output', file])).code).toBe(0)
      const text = await readFile(file, 'utf8')
      expect(text).toContain('version: palisade.policy-bundle/v1')
      expect(text).toContain('filter_expression: tenant = {user.tenant}')
      const same = await adminCli(['apply', file, '--dry-run'])
      expect(same.code).toBe(0)
      expect(same.last).toBe('nothing to change: the store already matches the bundle')
      await writeFile(file, text.replace('tenant = {user.tenant}', "tenant = 'acme'"))
      const changed = await adminCli(['apply', file, '--dry-run'])
      expect(changed.code).toBe(0)
      expect(changed.last).toBe(
        [
          'plan (dry run, nothing changed): 0 to create, 1 to update, 0 to delete',
          '  ~ policy tenant-isolation (filter_expression)',
        ].join('\n'),
      )
    })
  })
})
