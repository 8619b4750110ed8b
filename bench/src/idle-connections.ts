/** bench/proxy's memory figure: the proxy's RSS while it holds many idle client connections. */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import pg from 'pg'
import { startProxyProcess } from './proxy-child.js'
import { PASSWORD } from './proxy-fixture.js'
import { fmt } from './stats.js'

const mb = (bytes: number) => `${fmt(bytes / 1024 / 1024, 0)} MB`

/**
 * RSS of a proxy holding `count` idle client connections: the proxy runs alone in a child
 * process over an embedded PGlite upstream, which has no session limit (each client holds its
 * own upstream session, past PostgreSQL's default limit of 100). The database's share comes from
 * a second process that loads the same modules and builds only the database: its RSS before is
 * what Node, tsx and the modules take, its growth is subtracted from the proxy's RSS.
 */
export async function idleConnections(count: number): Promise<void> {
  const [alone, proxy] = await Promise.all([pgliteAlone(), startProxyProcess({ kind: 'pglite' })])
  const clients: pg.Client[] = []
  const open = async (port: number, n: number) => {
    for (let i = 0; i < n; i += 50) {
      const batch = Array.from({ length: Math.min(50, n - i) }, () => {
        const c = new pg.Client({
          host: '127.0.0.1',
          port,
          user: 'alice',
          password: PASSWORD,
          database: 'bench',
        })
        clients.push(c)
        return c.connect()
      })
      await Promise.all(batch)
    }
  }
  const { port } = proxy
  try {
    // The slope between 100 and `count` connections: PGlite's start-up memory, which the
    // process returns over its first seconds, does not distort it.
    await open(port, 100)
    const first = await proxy.rss()
    await open(port, count - 100)
    await clients[0]?.query('SELECT 1')
    const held = await proxy.rss()
    const perConnection = (held - first) / (count - 100)
    const database = alone.after - alone.before
    console.log(
      `${count} idle connections: proxy process RSS ${mb(held)}, ` +
        `${fmt(perConnection / 1024, 0)} KB per connection (${mb(perConnection * count)} for ${count})\n` +
        `  without its in-process PGlite database (${mb(database)}, measured alone): ` +
        `${mb(held - database)}; Node, tsx and the loaded modules alone take ${mb(alone.before)}\n`,
    )
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => {})))
    await proxy.stop()
  }
}

/** Settled RSS of a process like the proxy's before and after it builds the seeded PGlite. */
async function pgliteAlone(): Promise<{ before: number; after: number }> {
  const script = new URL('./proxy-process.ts', import.meta.url).pathname
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', script],
    { env: { ...process.env, BENCH_PROXY_UPSTREAM: '{"kind":"pglite-only"}' } },
  )
  return JSON.parse(stdout) as { before: number; after: number }
}
