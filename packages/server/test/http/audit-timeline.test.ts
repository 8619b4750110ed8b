import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { setup, type TestContext } from './helpers.js'

let ctx: TestContext
const U1 = '0190f000-0000-7000-8000-0000000000b1'
const U2 = '0190f000-0000-7000-8000-0000000000b2'
const D1 = '0190f000-0000-7000-8000-0000000000e1'

/** Statements at fixed times: two hours of one day, and one the next day. */
const WRITES: [string, string, 'success' | 'error' | 'denied'][] = [
  ['2026-03-01T10:05:00Z', U1, 'success'],
  ['2026-03-01T10:59:59Z', U1, 'denied'],
  ['2026-03-01T10:30:00Z', U2, 'success'],
  ['2026-03-01T12:00:00Z', U1, 'error'],
  ['2026-03-02T09:00:00Z', U1, 'success'],
]

beforeAll(async () => {
  ctx = await setup()
  for (const [at, user, status] of WRITES) {
    ctx.store.audit.queries.write({
      user_id: user,
      username: user === U1 ? 'one' : 'two',
      data_source_id: D1,
      datasource_name: 'shop',
      original_query: 'SELECT 1',
      status,
      created_at: new Date(at),
    })
  }
  await ctx.store.audit.queries.flush()
})
afterAll(async () => {
  await ctx.close()
})

async function timeline(query: string) {
  const res = await ctx.call('GET', `/api/v1/audit/queries/timeline${query}`)
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

describe('GET /audit/queries/timeline', () => {
  it('counts statements per hour and status, with every hour of the window present', async () => {
    const { status, body } = await timeline('?from=2026-03-01T10:15:00Z&to=2026-03-01T13:00:00Z')
    expect(status).toBe(200)
    expect(body['bucket_seconds']).toBe(3600)
    expect(body['from']).toBe('2026-03-01T10:00:00.000Z')
    expect(body['buckets']).toEqual([
      { start: '2026-03-01T10:00:00.000Z', success: 2, error: 0, denied: 1 },
      { start: '2026-03-01T11:00:00.000Z', success: 0, error: 0, denied: 0 },
      { start: '2026-03-01T12:00:00.000Z', success: 0, error: 1, denied: 0 },
      { start: '2026-03-01T13:00:00.000Z', success: 0, error: 0, denied: 0 },
    ])
  })

  it('filters by user and datasource', async () => {
    const window = 'from=2026-03-01T10:00:00Z&to=2026-03-01T10:00:00Z'
    const two = await timeline(`?${window}&user_id=${U2}`)
    expect(two.body['buckets']).toEqual([
      { start: '2026-03-01T10:00:00.000Z', success: 1, error: 0, denied: 0 },
    ])
    const other = await timeline(`?${window}&datasource_id=${U1}`)
    expect(other.body['buckets']).toEqual([
      { start: '2026-03-01T10:00:00.000Z', success: 0, error: 0, denied: 0 },
    ])
  })

  it('defaults to the 24 hours ending now', async () => {
    const { body } = await timeline('')
    const buckets = body['buckets'] as { start: string }[]
    expect(buckets).toHaveLength(24)
    expect(Date.now() - Date.parse(buckets[23]?.start ?? '')).toBeLessThan(3_600_000)
  })

  it('refuses a reversed or over-long window and bad filters with 400', async () => {
    for (const query of [
      '?from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z',
      '?from=2025-01-01T00:00:00Z&to=2026-03-01T00:00:00Z',
      '?user_id=nope',
      '?from=yesterday',
    ]) {
      const { status, body } = await timeline(query)
      expect(status, query).toBe(400)
      expect((body['error'] as { code: string }).code).toBe('invalid_parameter')
    }
  })
})
