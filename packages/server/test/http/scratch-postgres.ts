import pg from 'pg'

/** A scratch database on the PostgreSQL server of the tests, seeded, with a datasource config. */
export interface ScratchPostgres {
  /** The `config` of a `postgres` datasource that reads it. */
  readonly config: Record<string, unknown>
  drop(): Promise<void>
}

/** Creates database `name` on the server of `url`, runs `seedSql` in it. */
export async function scratchPostgres(
  url: string,
  name: string,
  seedSql: string,
): Promise<ScratchPostgres> {
  const base = new URL(url)
  const admin = new pg.Client({ connectionString: base.toString() })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  const scratch = new pg.Client({
    connectionString: base.toString().replace(/\/[^/]*$/, `/${name}`),
  })
  await scratch.connect()
  await scratch.query(seedSql)
  await scratch.end()
  return {
    config: {
      host: base.hostname,
      port: Number(base.port || 5432),
      database: name,
      username: decodeURIComponent(base.username || 'postgres'),
      password: base.password ? decodeURIComponent(base.password) : null,
      sslmode: 'disable',
    },
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await admin.end()
    },
  }
}
