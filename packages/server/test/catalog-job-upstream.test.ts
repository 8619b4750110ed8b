import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLogger, createServer, type PalisadeServer } from '../src/index.js'
import { adminCall, adminLogin } from './fixtures/login-clients.js'
import { type ScratchPostgres, scratchPostgres } from './http/scratch-postgres.js'
import { UPSTREAM_SQL } from './http/upstream-fixtures.js'

const url = process.env['PALISADE_TEST_PG_URL']
const OPS = { username: 'ops', password: 'Ops-Passw0rd!' }

/**
 * A catalog job readies the data plane for the datasource it saved: the upstream pool is open
 * before the first client logs in, so that login does not wait for upstream connections.
 */
describe.skipIf(!url)('a catalog job opens the datasource upstream pool', () => {
  const database = `palisade_job_pool_${process.pid}_${Date.now()}`
  let scratch: ScratchPostgres | undefined
  let server: PalisadeServer
  let token: string

  beforeAll(async () => {
    scratch = await scratchPostgres(url ?? '', database, UPSTREAM_SQL)
    server = await createServer({
      secretKey: 'job-pool-tests-only-key-job-pool-tests',
      jwtSecret: 'job-pool-tests-only-secret-job-pool-tests',
      dataPlane: { port: 0 },
      admin: { port: 0 },
      initialAdmin: OPS,
      logger: createLogger({ level: 'silent' }),
    })
    token = ((await adminLogin(server, OPS.username, OPS.password)).body as { token: string }).token
  })

  afterAll(async () => {
    await server?.close()
    await scratch?.drop()
  })

  const call = async (method: string, path: string, body?: unknown) => {
    const answer = await adminCall(server, method, `/api/v1${path}`, { token, body })
    expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(300)
    return answer.body as Record<string, any>
  }

  const runJob = async (datasourceId: string, body: unknown) => {
    const { job_id } = await call('POST', `/datasources/${datasourceId}/discover`, body)
    for (;;) {
      const job = await call('GET', `/datasources/${datasourceId}/discover/${job_id}`)
      if (job['status'] !== 'running') return job
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  /** A save_catalog job exposing one table of `public`. */
  const saveTable = (datasourceId: string, table: string) =>
    runJob(datasourceId, {
      action: 'save_catalog',
      schemas: [
        {
          schema_name: 'public',
          is_selected: true,
          tables: [{ table_name: table, is_selected: true }],
        },
      ],
    })

  const poolOf = (name: string) =>
    server.dataPlane.upstreamPools().find((pool) => pool.datasource === name)

  it('after save_catalog, before any login; a discovery that saves nothing opens none', async () => {
    const ds = await call('POST', '/datasources', {
      name: 'pooled',
      ds_type: 'postgres',
      config: scratch?.config,
      pool_size: 4,
    })
    const schemas = await runJob(ds['id'], { action: 'discover_schemas' })
    expect(schemas['status']).toBe('completed')
    expect(poolOf('pooled')).toBeUndefined()
    const saved = await saveTable(ds['id'], 'tenants')
    expect(saved['status']).toBe('completed')
    const pool = poolOf('pooled')
    expect(pool).toBeDefined()
    expect(pool?.size).toBeGreaterThan(0)
    expect(pool?.idle).toBe(pool?.size)
    expect(server.dataPlane.connections).toBe(0)
  })

  it('leaves an embedded upstream to its first login', async () => {
    const ds = await call('POST', '/datasources', {
      name: 'embedded',
      ds_type: 'pglite',
      config: { init_sql: 'CREATE TABLE t (id int)' },
    })
    const saved = await saveTable(ds['id'], 't')
    expect(saved['status']).toBe('completed')
    expect(server.dataPlane.upstreamStatuses().map((s) => s.datasource)).not.toContain('embedded')
  })
})

describe.skipIf(Boolean(url))('a catalog job opens the datasource upstream pool', () => {
  it.skip('needs PALISADE_TEST_PG_URL (e.g. postgresql://postgres@127.0.0.1:5432/test)', () => {})
})
