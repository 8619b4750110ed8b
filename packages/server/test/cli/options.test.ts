import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ensureInitialAdmin, resolveJwtSecret } from '../../src/bootstrap/admin-bootstrap.js'
import { helpText } from '../../src/cli/main.js'
import { serverConfigFromArgs } from '../../src/cli/options.js'
import { createTestStore } from '../fixtures/snapshots.js'

describe('palisade serve configuration', () => {
  it('takes flags over environment variables and the environment over defaults', () => {
    const env = { PALISADE_PG_PORT: '7000', PALISADE_ADMIN_PORT: '7001', DATABASE_URL: 'pg://x' }
    const config = serverConfigFromArgs({ 'pg-port': '6000', 'log-level': 'silent' }, env)
    expect(config.dataPlane?.port).toBe(6000)
    expect(config.admin?.port).toBe(7001)
    expect(config.databaseUrl).toBe('pg://x')
    expect(config.dataDir).toBe('./palisade-data')
  })

  it('reads the first admin, JWT secret and CORS origins from the environment', () => {
    const config = serverConfigFromArgs(
      { 'log-level': 'silent' },
      {
        PALISADE_ADMIN_USERNAME: 'root',
        PALISADE_ADMIN_PASSWORD: 'Root-pass-1',
        PALISADE_ADMIN_JWT_SECRET: 'x'.repeat(32),
        PALISADE_ADMIN_CORS_ORIGINS: 'https://a.example, https://b.example',
      },
    )
    expect(config.initialAdmin).toEqual({ username: 'root', password: 'Root-pass-1' })
    expect(config.jwtSecret).toBe('x'.repeat(32))
    expect(config.admin?.corsOrigins).toEqual(['https://a.example', 'https://b.example'])
  })

  it('rejects a bad port, a lone TLS file and an unknown log level', () => {
    expect(() => serverConfigFromArgs({ 'pg-port': 'abc' }, {})).toThrow('port number')
    expect(() => serverConfigFromArgs({ 'tls-cert': 'c.pem' }, {})).toThrow('cert and a key')
    expect(() => serverConfigFromArgs({ 'log-level': 'loud' }, {})).toThrow('log level')
  })

  it('reads the default pool mode and the pool wait, and rejects bad ones', () => {
    const config = serverConfigFromArgs(
      { 'log-level': 'silent', 'pool-wait-timeout': '5' },
      { PALISADE_POOL_MODE: 'transaction' },
    )
    expect(config.dataPlane?.poolMode).toBe('transaction')
    expect(config.dataPlane?.acquireTimeoutMs).toBe(5000)
    expect(() => serverConfigFromArgs({ 'pool-mode': 'statement' }, {})).toThrow(
      '--pool-mode must be session or transaction',
    )
    expect(() => serverConfigFromArgs({ 'pool-wait-timeout': '-1' }, {})).toThrow(
      '--pool-wait-timeout must be an integer of at least 1',
    )
  })

  it('reads the query-audit retention in days, and rejects anything but a positive integer', () => {
    expect(serverConfigFromArgs({ 'log-level': 'silent' }, {}).auditRetentionDays).toBeUndefined()
    expect(
      serverConfigFromArgs({ 'log-level': 'silent' }, { PALISADE_AUDIT_RETENTION_DAYS: '90' })
        .auditRetentionDays,
    ).toBe(90)
    expect(
      serverConfigFromArgs(
        { 'log-level': 'silent', 'audit-retention': '30' },
        { PALISADE_AUDIT_RETENTION_DAYS: '90' },
      ).auditRetentionDays,
    ).toBe(30)
    for (const bad of ['0', '-5', '1.5', 'ninety']) {
      expect(() => serverConfigFromArgs({ 'audit-retention': bad }, {})).toThrow(
        '--audit-retention must be an integer of at least 1',
      )
    }
  })

  it('reads the login throttle settings, and rejects bad ones', () => {
    const config = serverConfigFromArgs(
      { 'log-level': 'silent', 'login-throttle-address-failures': '0' },
      {
        PALISADE_LOGIN_THROTTLE_ACCOUNT_FAILURES: '5',
        PALISADE_LOGIN_THROTTLE_WINDOW_SECONDS: '60',
        PALISADE_LOGIN_THROTTLE_MAX_DELAY_SECONDS: '30',
      },
    )
    expect(config.loginThrottle).toEqual({
      windowMs: 60_000,
      addressFailures: 0,
      accountFailures: 5,
      maxDelayMs: 30_000,
    })
    expect(() => serverConfigFromArgs({ 'login-throttle-window': '0' }, {})).toThrow(
      '--login-throttle-window must be an integer of at least 1',
    )
    expect(() => serverConfigFromArgs({ 'login-throttle-account-failures': '-3' }, {})).toThrow(
      '--login-throttle-account-failures must be an integer of at least 0',
    )
    expect(() => serverConfigFromArgs({ 'login-throttle-max-delay': 'soon' }, {})).toThrow(
      '--login-throttle-max-delay must be an integer of at least 1',
    )
  })

  it('lists every command in the help text', () => {
    for (const word of ['serve', 'migrate', 'demo', '--data-dir', 'DATABASE_URL']) {
      expect(helpText()).toContain(word)
    }
  })
})

describe('first start', () => {
  it('generates the admin JWT secret once, with mode 0600, and reuses it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'palisade-secret-'))
    try {
      const first = await resolveJwtSecret({ dataDir: dir })
      const again = await resolveJwtSecret({ dataDir: dir })
      expect(first.source).toBe('file')
      expect(again.secret).toBe(first.secret)
      expect(Buffer.byteLength(first.secret)).toBeGreaterThanOrEqual(32)
      expect((await stat(join(dir, 'admin-jwt-secret'))).mode & 0o777).toBe(0o600)
      expect((await resolveJwtSecret({ configured: 'c'.repeat(32), dataDir: dir })).secret).toBe(
        'c'.repeat(32),
      )
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('creates the initial admin only while the store has none', async () => {
    const store = await createTestStore({ secretKey: 'palisade-cli-tests-only-key' })
    try {
      const credentials = { username: 'root', password: 'Root-pass-1' }
      expect((await ensureInitialAdmin(store, credentials))?.is_admin).toBe(true)
      expect(await ensureInitialAdmin(store, { ...credentials, username: 'other' })).toBeNull()
      expect(await store.users.findByUsername('other')).toBeNull()
    } finally {
      await store.close()
    }
  })
})
