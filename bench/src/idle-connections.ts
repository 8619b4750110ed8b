/** bench/proxy's memory figure: the proxy's RSS while it holds many idle client connections. */
import pg from 'pg'
import { startProxyProcess } from './proxy-child.js'
import { PASSWORD } from './proxy-fixture.js'
import { fmt } from './stats.js'

/**
 * RSS of a proxy holding `count` idle client connections: the proxy runs alone in a child
 * process over an embedded PGlite upstream, which has no session limit.
 */
export async function idleConnections(count: number): Promise<void> {
  const proxy = await startProxyProcess({ kind: 'pglite' })
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
    const perConnection = (held - first) / (count - 100) / 1024
    console.log(
      `${count} idle connections: proxy RSS ${fmt(held / 1024 / 1024, 0)} MB, ` +
        `${fmt(perConnection, 0)} KB per connection ` +
        `(${fmt((perConnection * count) / 1024, 0)} MB for ${count}; the rest is Node, PGlite and QuickJS)\n`,
    )
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => {})))
    await proxy.stop()
  }
}
