import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type Answer,
  type Attempt,
  adminLogin,
  dataLogin,
  type LoginTestServer,
  median,
  startLoginServer,
} from './fixtures/login-clients.js'
import { PASSWORD } from './fixtures/seed-store.js'

const WRONG = 'Not-the-passw0rd!'
const TRIES = 50

/**
 * Runs every case `TRIES` times, interleaved (so a slow spell of the machine hits all cases
 * alike), `parallel` at a time, and returns each case's answers. A round whose medians differ by
 * 15% or more is measured again, at most five times: the claim is about the distributions, and
 * one busy moment of a shared test machine is not one of them.
 */
async function interleaved<T extends { ms: number }>(
  cases: Record<string, () => Promise<T>>,
  parallel = 1,
): Promise<{ answers: Record<string, T[]>; medians: Record<string, number>; spread: number }> {
  let last: { answers: Record<string, T[]>; medians: Record<string, number>; spread: number }
  for (let round = 0; ; round++) {
    const answers: Record<string, T[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]))
    const order = Array.from({ length: TRIES }, () => Object.keys(cases)).flat()
    for (let i = 0; i < order.length; i += parallel) {
      await Promise.all(
        order.slice(i, i + parallel).map(async (name) => {
          answers[name]?.push(await (cases[name] as () => Promise<T>)())
        }),
      )
    }
    const medians = Object.fromEntries(
      Object.entries(answers).map(([k, v]) => [k, median(v.map((a) => a.ms))]),
    )
    const values = Object.values(medians)
    const spread = Math.max(...values) / Math.min(...values)
    last = { answers, medians, spread }
    if (spread < 1.15 || round === 4) return last
  }
}

/** Every answer of every case has the same status/code and message. */
function sameAnswers<T>(answers: Record<string, T[]>, pick: (answer: T) => unknown): unknown {
  const seen = new Set(
    Object.values(answers).flatMap((list) => list.map((a) => JSON.stringify(pick(a)))),
  )
  expect(seen.size).toBe(1)
  return JSON.parse([...seen][0] as string)
}

const adminShape = (a: Answer) => ({
  status: a.status,
  body: a.body,
  retry: a.headers['retry-after'],
})
const dataShape = (a: Attempt) => ({ code: a.code, message: a.message?.replace(/"[^"]*"/, '"…"') })

describe('no account probing: every failed login looks and takes the same, throttled or not', () => {
  let open: LoginTestServer
  let strict: LoginTestServer
  beforeAll(async () => {
    // Throttling is on but out of reach here ...
    open = await startLoginServer({ addressFailures: 100_000, accountFailures: 100_000 })
    // ... and here one failure locks an account name for a minute.
    strict = await startLoginServer(
      { addressFailures: 0, accountFailures: 1, baseDelayMs: 60_000, maxDelayMs: 60_000 },
      1000,
    )
  })
  afterAll(async () => {
    await open?.close()
    await strict?.close()
  })

  it('admin API: unknown, inactive, non-admin and existing users with a wrong password', async () => {
    const s = open.server
    const { answers, medians, spread } = await interleaved({
      existing: () => adminLogin(s, 'admin', WRONG),
      unknown: () => adminLogin(s, 'ghost', WRONG),
      inactive: () => adminLogin(s, 'dave', PASSWORD),
      nonAdmin: () => adminLogin(s, 'carol', WRONG),
    })
    expect(sameAnswers(answers, adminShape)).toMatchObject({ status: 401 })
    expect(spread, JSON.stringify(medians)).toBeLessThan(1.15)
  })

  it('data plane: unknown, inactive, no-access and existing users with a wrong password', async () => {
    const s = open.server
    const { answers, medians, spread } = await interleaved({
      existing: () => dataLogin(s, 'alice', WRONG),
      unknown: () => dataLogin(s, 'ghost', WRONG),
      inactive: () => dataLogin(s, 'dave', PASSWORD),
      noAccess: () => dataLogin(s, 'bob', WRONG),
    })
    expect(sameAnswers(answers, dataShape)).toEqual({
      code: '28P01',
      message: 'password authentication failed for user "…"',
    })
    expect(spread, JSON.stringify(medians)).toBeLessThan(1.15)
  })

  it('a throttled existing account and a throttled unknown name answer alike on both planes', async () => {
    const s = strict.server
    for (const name of ['admin', 'alice', 'ghost', 'phantom']) {
      expect((await adminLogin(s, name, WRONG, '127.0.0.41')).status).toBe(401)
    }
    const admin = await interleaved({
      existing: () => adminLogin(s, 'admin', PASSWORD, '127.0.0.42'),
      unknown: () => adminLogin(s, 'ghost', WRONG, '127.0.0.42'),
    })
    expect(sameAnswers(admin.answers, adminShape)).toMatchObject({ status: 429, retry: '60' })
    expect(admin.spread, JSON.stringify(admin.medians)).toBeLessThan(1.15)
    const data = await interleaved(
      {
        existing: () => dataLogin(s, 'alice', PASSWORD, '127.0.0.43'),
        unknown: () => dataLogin(s, 'phantom', WRONG, '127.0.0.43'),
      },
      10,
    )
    expect(sameAnswers(data.answers, dataShape)).toEqual({
      code: '28P01',
      message: 'password authentication failed for user "…"',
    })
    expect(data.spread, JSON.stringify(data.medians)).toBeLessThan(1.15)
    // Held until shortly before the one-second login timeout, not answered at once.
    expect(data.medians['existing']).toBeGreaterThan(500)
  }, 120_000)
})
