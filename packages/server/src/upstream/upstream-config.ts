import type { DatasourceConnection } from '@palisade/store'
import type { UpstreamConfig } from './upstream.types.js'

/**
 * The one reading of a stored datasource as an upstream: the data plane's pool, discovery,
 * catalog sync, classification, preview and the connection test all connect with what this
 * returns, so a config (its `sslmode` above all) means the same thing everywhere.
 */
export function upstreamConfigOf(ds: DatasourceConnection): UpstreamConfig {
  if (ds.ds_type === 'pglite') {
    return {
      kind: 'pglite',
      datasourceName: ds.name,
      dataDir: ds.config.data_dir ?? null,
      initSql: ds.config.init_sql ?? null,
      statementTimeoutMs: ds.statement_timeout_ms,
    }
  }
  const c = ds.config
  return {
    kind: 'postgres',
    datasourceName: ds.name,
    host: c.host,
    port: c.port ?? 5432,
    database: c.database,
    user: c.username,
    password: c.password ?? null,
    sslmode: c.sslmode ?? 'prefer',
    sslrootcert: c.sslrootcert ?? null,
    statementTimeoutMs: ds.statement_timeout_ms,
    poolSize: ds.pool_size,
    poolMode: ds.pool_mode ?? undefined,
  }
}
