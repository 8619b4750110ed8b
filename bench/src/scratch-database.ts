/** A scratch PostgreSQL database seeded with the bench schema, and the proxy's upstream config for it. */
import pg from 'pg'
import { SETUP } from './proxy-fixture.js'

export interface ScratchDatabase {
  /** The database's name. */
  readonly name: string
  /** How a client reaches it directly. */
  readonly direct: pg.ClientConfig
  /** The proxy process's upstream config (proxy-process.ts). */
  readonly upstream: Record<string, unknown>
  /** Drops the database. */
  drop(): Promise<void>
}

/** Creates and seeds `palisade_bench_<pid>` on the server of `pgUrl`. */
export async function createScratchDatabase(pgUrl: string): Promise<ScratchDatabase> {
  const url = new URL(pgUrl)
  const name = `palisade_bench_${process.pid}`
  const admin = new pg.Client({ connectionString: pgUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  const direct = { connectionString: pgUrl.replace(/\/[^/]*$/, `/${name}`) }
  const seed = new pg.Client(direct)
  await seed.connect()
  await seed.query(SETUP)
  await seed.end()
  return {
    name,
    direct,
    upstream: {
      kind: 'postgres',
      datasourceName: 'bench',
      host: url.hostname,
      port: Number(url.port || 5432),
      database: name,
      user: decodeURIComponent(url.username || 'postgres'),
      password: url.password ? decodeURIComponent(url.password) : null,
      sslmode: 'disable',
      statementTimeoutMs: 0,
      poolSize: 16,
    },
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await admin.end()
    },
  }
}
