import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  adminCall,
  adminLogin,
  dataLogin,
  type LoginTestServer,
  startLoginServer,
} from './fixtures/login-clients.js'
import { PASSWORD } from './fixtures/seed-store.js'

const WRONG = 'Not-the-passw0rd!'
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The login-audit rows, newest first, after the queue is written. */
async function loginAudit(t: LoginTestServer, query = ''): Promise<Record<string, unknown>[]> {
  await t.server.store.logins.flush()
  const res = await adminCall(t.server, 'GET', `/api/v1/audit/logins?page_size=200${query}`, {
    token: t.token,
    localAddress: '127.0.0.100',
  })
  expect(res.status).toBe(200)
  return (res.body as { data: Record<string, unknown>[] }).data
}

describe('failed logins on the admin API are throttled per address, audited and logged', () => {
  let t: LoginTestServer
  beforeAll(async () => {
    t = await startLoginServer({
      addressFailures: 3,
      accountFailures: 0,
      baseDelayMs: 1500,
      maxDelayMs: 3000,
    })
  })
  afterAll(() => t.close())

  it('answers 429 with Retry-After past the threshold, even to the right password, then recovers', async () => {
    const { server } = t
    const address = '127.0.0.11'
    expect((await adminLogin(server, 'admin', WRONG, address)).status).toBe(401)
    expect((await adminLogin(server, 'ghost', WRONG, address)).status).toBe(401)
    expect((await adminLogin(server, 'dave', PASSWORD, address)).status).toBe(401)
    const throttled = await adminLogin(server, 'admin', PASSWORD, address)
    expect(throttled.status).toBe(429)
    expect(throttled.headers['retry-after']).toBe('2')
    expect(throttled.body).toEqual({
      error: {
        code: 'too_many_attempts',
        message: 'too many failed logins; try again in 2 s',
      },
    })
    // Another address is not affected.
    expect((await adminLogin(server, 'admin', PASSWORD, '127.0.0.12')).status).toBe(200)
    await sleep(1600)
    expect((await adminLogin(server, 'admin', PASSWORD, address)).status).toBe(200)

    const rows = await loginAudit(t, `&client_address=${address}`)
    expect(rows.map((r) => [r['outcome'], r['reason'], r['username']]).reverse()).toEqual([
      ['failed', 'wrong_password', 'admin'],
      ['failed', 'unknown_user', 'ghost'],
      ['failed', 'inactive_user', 'dave'],
      ['throttled', 'throttled_address', 'admin'],
    ])
    for (const row of rows) expect(row).toMatchObject({ plane: 'admin', client_address: address })
    const lines = t.logs.filter((l) => l['address'] === address)
    expect(lines.map((l) => [l['event'], l['level']])).toEqual([
      ['login_failed', 40],
      ['login_failed', 40],
      ['login_failed', 40],
      ['login_throttled', 40],
    ])
    expect(lines[3]).toMatchObject({ plane: 'admin', user: 'admin', scope: 'address' })
    expect(JSON.stringify(t.logs)).not.toContain(WRONG)
  })

  it('lists the throttled address and clears it for an admin, audited with the actor', async () => {
    const { server } = t
    const address = '127.0.0.13'
    for (let i = 0; i < 3; i++) await adminLogin(server, `nobody${i}`, WRONG, address)
    expect((await adminLogin(server, 'admin', PASSWORD, address)).status).toBe(429)
    const listed = await adminCall(server, 'GET', '/api/v1/login-throttles', {
      token: t.token,
      localAddress: '127.0.0.100',
    })
    expect(listed.status).toBe(200)
    expect(listed.body).toContainEqual({
      scope: 'address',
      key: address,
      failures: 3,
      window_seconds: 900,
      throttled_until: expect.any(String),
    })
    const bad = await adminCall(server, 'DELETE', '/api/v1/login-throttles', {
      token: t.token,
      localAddress: '127.0.0.100',
    })
    expect(bad.status).toBe(400)
    const cleared = await adminCall(
      server,
      'DELETE',
      `/api/v1/login-throttles?address=${address}`,
      { token: t.token, localAddress: '127.0.0.100' },
    )
    expect(cleared.status).toBe(204)
    expect((await adminLogin(server, 'admin', PASSWORD, address)).status).toBe(200)
    const [row] = await loginAudit(t, '&outcome=cleared')
    expect(row).toMatchObject({
      plane: 'admin',
      reason: 'cleared_address',
      client_address: address,
      actor_id: t.shop.admin.id,
    })
    // A non-admin cannot read or clear throttles.
    const carol = await adminLogin(server, 'carol', PASSWORD, '127.0.0.14')
    expect(carol.status).toBe(403)
  })
})

describe('failed logins on the data plane are throttled by delay alone', () => {
  let t: LoginTestServer
  beforeAll(async () => {
    t = await startLoginServer({
      addressFailures: 3,
      accountFailures: 2,
      baseDelayMs: 2000,
      maxDelayMs: 4000,
    })
  })
  afterAll(() => t.close())

  it('answers a throttled address with the usual 28P01 after the delay, the right password too', async () => {
    const { server } = t
    const address = '127.0.0.21'
    for (const user of ['alice', 'ghost', 'dave']) {
      const failed = await dataLogin(server, user, WRONG, address)
      expect(failed.code).toBe('28P01')
    }
    const throttled = await dataLogin(server, 'carol', PASSWORD, address)
    expect(throttled).toMatchObject({
      code: '28P01',
      message: 'password authentication failed for user "carol"',
    })
    expect(throttled.ms).toBeGreaterThan(1500)
    await sleep(2100)
    const ok = await dataLogin(server, 'carol', PASSWORD, address)
    expect(ok.code).toBeUndefined()
    expect((await ok.client?.query('SELECT 1 AS one'))?.rows).toEqual([{ one: 1 }])
    await ok.client?.end()

    const rows = await loginAudit(t, `&client_address=${address}`)
    expect(rows.map((r) => [r['outcome'], r['reason'], r['username']]).reverse()).toEqual([
      ['failed', 'wrong_password', 'alice'],
      ['failed', 'unknown_user', 'ghost'],
      ['failed', 'inactive_user', 'dave'],
      ['throttled', 'throttled_address', 'carol'],
    ])
    for (const row of rows) {
      expect(row).toMatchObject({ plane: 'data', datasource_name: 'shop' })
    }
    const lines = t.logs.filter((l) => l['address'] === address && l['plane'] === 'data')
    expect(lines.map((l) => l['event'])).toEqual([
      'login_failed',
      'login_failed',
      'login_failed',
      'login_throttled',
    ])
  })

  it('slows guesses at one account from many addresses without locking out its usual address', async () => {
    const { server } = t
    const home = await dataLogin(server, 'carol', PASSWORD, '127.0.0.30')
    expect(home.code).toBeUndefined()
    await home.client?.end()
    expect((await dataLogin(server, 'carol', WRONG, '127.0.0.31')).code).toBe('28P01')
    expect((await dataLogin(server, 'carol', WRONG, '127.0.0.32')).code).toBe('28P01')
    // The admin API shares the throttle: the account is slowed there at once.
    const admin = await adminLogin(server, 'carol', PASSWORD, '127.0.0.34')
    expect(admin.status).toBe(429)
    // From a new address even the right password waits, then fails like a wrong one ...
    const elsewhere = await dataLogin(server, 'carol', PASSWORD, '127.0.0.33')
    expect(elsewhere.code).toBe('28P01')
    expect(elsewhere.ms).toBeGreaterThan(1000)
    // ... while the address carol logged in from is checked at once.
    const again = await dataLogin(server, 'carol', PASSWORD, '127.0.0.30')
    expect(again.code).toBeUndefined()
    expect(again.ms).toBeLessThan(1000)
    await again.client?.end()
    const rows = (await loginAudit(t, '&username=carol&outcome=throttled')).filter(
      (r) => r['reason'] === 'throttled_account',
    )
    expect(rows.map((r) => [r['plane'], r['reason'], r['client_address']])).toEqual([
      ['data', 'throttled_account', '127.0.0.33'],
      ['admin', 'throttled_account', '127.0.0.34'],
    ])
  })
})
