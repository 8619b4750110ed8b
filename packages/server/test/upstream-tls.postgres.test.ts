/**
 * `sslmode` means one thing on every path to an upstream: the admin plane's connection test and
 * catalog reads, and the data plane's sessions. Checked against clusters of the test's own: one
 * that accepts TLS connections only (pg_hba `hostssl`), with a certificate for `localhost`
 * signed by a test CA, and one without TLS. As libpq: `prefer` tries TLS first and falls back,
 * `require` encrypts without checking the certificate, `verify-ca` checks the chain but not the
 * host name, `verify-full` checks both.
 */
import { TLSSocket } from 'node:tls'
import type { DatasourceConnection } from '@palisade/store'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDataPlane } from '../src/index.js'
import { connectPostgres } from '../src/upstream/postgres-connect.js'
import { upstreamConfigOf } from '../src/upstream/upstream-config.js'
import { probeUpstream } from '../src/upstream/upstream-probe.js'
import { openUpstreamReader } from '../src/upstream/upstream-reader.js'
import { PASSWORD, seedShop } from './fixtures/seed-store.js'
import { SHOP_SQL } from './fixtures/shop.js'
import { createTestStore } from './fixtures/snapshots.js'
import {
  hasOpenssl,
  makeTestCertificates,
  type TestCertificates,
} from './fixtures/test-certificates.js'
import {
  postgresBinaries,
  startThrowawayCluster,
  type ThrowawayCluster,
} from './fixtures/throwaway-cluster.js'

const enabled =
  Boolean(process.env['PALISADE_TEST_PG_URL']) && postgresBinaries() !== undefined && hasOpenssl()
const TIMEOUTS = { connectMs: 5000, statementMs: 5000 }

type SslMode = 'disable' | 'prefer' | 'require' | 'verify-ca' | 'verify-full'

/** What one path made of a config: connected (and whether over TLS), or the error. */
type Outcome = { ok: true; tls: boolean } | { ok: false; message: string }

describe.skipIf(!enabled)('upstream TLS: sslmode on every path', () => {
  let certs: TestCertificates
  let tlsOnly: ThrowawayCluster
  let plain: ThrowawayCluster

  beforeAll(async () => {
    certs = makeTestCertificates()
    tlsOnly = await startThrowawayCluster(
      { listen_addresses: "'localhost'" },
      {
        tls: certs.server,
        hba: [
          'local all all trust',
          'hostssl all all 127.0.0.1/32 trust',
          'hostssl all all ::1/128 trust',
        ],
      },
    )
    plain = await startThrowawayCluster()
    const setup = new pg.Client({
      connectionString: tlsOnly.url(),
      ssl: { rejectUnauthorized: false },
    })
    await setup.connect()
    await setup.query('CREATE DATABASE shop')
    await setup.end()
    const shop = new pg.Client({
      connectionString: tlsOnly.url('shop'),
      ssl: { rejectUnauthorized: false },
    })
    await shop.connect()
    await shop.query(SHOP_SQL)
    await shop.end()
  }, 60_000)

  afterAll(() => {
    tlsOnly?.destroy()
    plain?.destroy()
  })

  function connection(
    cluster: ThrowawayCluster,
    sslmode: SslMode,
    options: { host?: string; rootcert?: string } = {},
  ): DatasourceConnection {
    return {
      id: '00000000-0000-0000-0000-00000000a001',
      name: 'tls-check',
      ds_type: 'postgres',
      config: {
        host: options.host ?? '127.0.0.1',
        port: cluster.port,
        database: 'postgres',
        username: 'postgres',
        sslmode,
        ...(options.rootcert ? { sslrootcert: options.rootcert } : {}),
      },
      statement_timeout_ms: 5000,
      pool_size: 1,
      pool_mode: null,
      is_active: true,
    }
  }

  const failure = (error: unknown): Outcome => ({
    ok: false,
    message: error instanceof Error ? error.message : String(error),
  })

  /** The admin plane's catalog reader, asking the server whether its connection is TLS. */
  async function viaReader(conn: DatasourceConnection): Promise<Outcome> {
    try {
      const reader = await openUpstreamReader(conn, TIMEOUTS)
      try {
        const [row] = await reader.query<{ ssl: boolean }>(
          'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()',
        )
        return { ok: true, tls: row?.ssl === true }
      } finally {
        await reader.close()
      }
    } catch (error) {
      return failure(error)
    }
  }

  /** The data plane's session opener. */
  async function viaDataPlane(conn: DatasourceConnection): Promise<Outcome> {
    const config = upstreamConfigOf(conn)
    if (config.kind !== 'postgres') throw new Error('expected a postgres config')
    try {
      const backend = await connectPostgres({ ...config, connectTimeoutMs: 5000 })
      backend.socket.destroy()
      return { ok: true, tls: backend.socket instanceof TLSSocket }
    } catch (error) {
      return failure(error)
    }
  }

  /** `POST /datasources/{id}/test`. */
  async function viaProbe(conn: DatasourceConnection): Promise<Outcome> {
    const result = await probeUpstream(conn)
    return result.success ? { ok: true, tls: true } : { ok: false, message: result.message }
  }

  /** Every path gets the same answer; the probe cannot tell TLS apart, so it reports ok only. */
  async function expectEverywhere(conn: DatasourceConnection, expected: Outcome) {
    const [reader, dataPlane, probe] = await Promise.all([
      viaReader(conn),
      viaDataPlane(conn),
      viaProbe(conn),
    ])
    if (expected.ok) {
      expect(reader).toEqual(expected)
      expect(dataPlane).toEqual(expected)
      expect(probe.ok).toBe(true)
    } else {
      for (const outcome of [reader, dataPlane, probe]) {
        expect(outcome.ok).toBe(false)
        if (!outcome.ok) expect(outcome.message).toMatch(new RegExp(expected.message, 'i'))
      }
    }
  }

  it('disable never encrypts: a TLS-only server refuses it, a plain one serves it', async () => {
    await expectEverywhere(connection(tlsOnly, 'disable'), {
      ok: false,
      message: 'no encryption|pg_hba',
    })
    await expectEverywhere(connection(plain, 'disable'), { ok: true, tls: false })
  })

  it('prefer encrypts when the server offers TLS and falls back when it does not', async () => {
    await expectEverywhere(connection(tlsOnly, 'prefer'), { ok: true, tls: true })
    await expectEverywhere(connection(plain, 'prefer'), { ok: true, tls: false })
  })

  it('require encrypts without checking the certificate, and fails on a server without TLS', async () => {
    await expectEverywhere(connection(tlsOnly, 'require'), { ok: true, tls: true })
    await expectEverywhere(connection(tlsOnly, 'require', { rootcert: certs.otherCa }), {
      ok: true,
      tls: true,
    })
    await expectEverywhere(connection(plain, 'require'), { ok: false, message: 'TLS' })
  })

  it('verify-ca checks the chain against the root certificate but not the host name', async () => {
    await expectEverywhere(connection(tlsOnly, 'verify-ca', { rootcert: certs.ca }), {
      ok: true,
      tls: true,
    })
    await expectEverywhere(connection(tlsOnly, 'verify-ca', { rootcert: certs.otherCa }), {
      ok: false,
      message: 'certificate',
    })
    // No root certificate: the system's CAs do not know the test CA.
    await expectEverywhere(connection(tlsOnly, 'verify-ca'), { ok: false, message: 'certificate' })
    await expectEverywhere(connection(plain, 'verify-ca', { rootcert: certs.ca }), {
      ok: false,
      message: 'TLS',
    })
  })

  it('verify-full also checks that the certificate names the host', async () => {
    await expectEverywhere(
      connection(tlsOnly, 'verify-full', { host: 'localhost', rootcert: certs.ca }),
      { ok: true, tls: true },
    )
    // The certificate names `localhost`, not the address.
    await expectEverywhere(
      connection(tlsOnly, 'verify-full', { host: '127.0.0.1', rootcert: certs.ca }),
      { ok: false, message: "IP: 127.0.0.1 is not in the cert's list|altnames" },
    )
    await expectEverywhere(
      connection(tlsOnly, 'verify-full', { host: 'localhost', rootcert: certs.otherCa }),
      { ok: false, message: 'certificate' },
    )
  })

  it('keeps a catalog read open past the connect timeout, in clear and over TLS', async () => {
    for (const conn of [connection(plain, 'disable'), connection(tlsOnly, 'require')]) {
      const reader = await openUpstreamReader(conn, { connectMs: 300, statementMs: 5000 })
      try {
        await new Promise((resolve) => setTimeout(resolve, 600))
        expect(await reader.query<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }])
      } finally {
        await reader.close()
      }
    }
  })

  it('a client of the data plane is served over a verify-full upstream session', async () => {
    const store = await createTestStore({ secretKey: 'palisade-tls-tests-only' })
    try {
      await seedShop(store, {
        ds_type: 'postgres',
        config: {
          host: 'localhost',
          port: tlsOnly.port,
          database: 'shop',
          username: 'postgres',
          sslmode: 'verify-full',
          sslrootcert: certs.ca,
        },
      })
      const dataPlane = await createDataPlane({ store, port: 0, log: () => {} })
      try {
        const client = new pg.Client({
          host: '127.0.0.1',
          port: dataPlane.port,
          user: 'alice',
          password: PASSWORD,
          database: 'shop',
        })
        await client.connect()
        try {
          const { rows } = await client.query<{ id: number }>('SELECT id FROM orders ORDER BY id')
          expect(rows.length).toBeGreaterThan(0)
        } finally {
          await client.end()
        }
      } finally {
        await dataPlane.close()
      }
    } finally {
      await store.close()
    }
  })
})
