/**
 * Compiled sessions shared between connections (data-plane/compiled-sessions.ts): the same
 * user under the same rules gets the same compiled session (and its rewrite caches); any
 * difference in the input gets its own, so one user's rules never serve another.
 */
import { loadCore, rewrite, type SessionInput } from '@palisade/core'
import { beforeAll, describe, expect, it } from 'vitest'
import { CompiledSessions } from '../src/data-plane/compiled-sessions.js'

/** A datasource's catalog as the store hands it out: one object per catalog version. */
function catalog(): SessionInput['catalog'] {
  return {
    schemas: [
      {
        name: 'public',
        tables: [
          {
            name: 'orders',
            columns: [
              { name: 'id', type: 'integer' },
              { name: 'tenant', type: 'integer' },
            ],
          },
        ],
      },
    ],
  }
}

const CATALOG = catalog()

function input(tenant: unknown, epoch: number, username = 'alice'): SessionInput {
  return {
    user: { id: `u-${username}`, username, roles: [], attributes: { tenant } },
    datasource: { id: 'ds-1', name: 'shop', accessMode: 'open' },
    catalog: CATALOG,
    attributeDefinitions: [{ key: 'tenant', valueType: 'integer', defaultValue: null }],
    policies: [
      {
        id: 'p-1',
        name: 'tenant',
        version: 1,
        type: 'row_filter',
        priority: 100,
        targets: [{ schemas: ['public'], tables: ['orders'] }],
        filterExpression: 'tenant = {user.tenant}',
      },
    ],
    epoch,
  }
}

const sqlOf = (session: Awaited<ReturnType<CompiledSessions['compile']>>) =>
  rewrite('SELECT id FROM orders', session).statements[0]?.sql

beforeAll(async () => {
  await loadCore()
})

describe('compiled sessions shared between connections', () => {
  it('gives the same rules one compiled session, whatever the build counter', async () => {
    const sessions = new CompiledSessions()
    const first = await sessions.compile(input(3, 1))
    const again = await sessions.compile(input(3, 2))
    expect(again).toBe(first)
    expect(sqlOf(again)).toContain('tenant = 3')
  })

  it('never shares across users, attribute values or rules', async () => {
    const sessions = new CompiledSessions()
    const alice = await sessions.compile(input(3, 1))
    const other = await sessions.compile(input(4, 2))
    const bob = await sessions.compile(input(3, 3, 'bob'))
    const changed = input(3, 4)
    const [filter] = changed.policies
    if (!filter) throw new Error('the input has its row filter')
    changed.policies = [{ ...filter, filterExpression: 'tenant = 0' }]
    const rules = await sessions.compile(changed)
    expect(new Set([alice, other, bob, rules]).size).toBe(4)
    expect(sqlOf(alice)).toContain('tenant = 3')
    expect(sqlOf(other)).toContain('tenant = 4')
    expect(sqlOf(rules)).toContain('tenant = 0')
    expect(sqlOf(rules)).not.toContain('tenant = 3')
  })

  it('gives another catalog object (a new catalog version) its own session', async () => {
    const sessions = new CompiledSessions()
    const before = await sessions.compile(input(3, 1))
    const next = { ...input(3, 2), catalog: catalog() }
    const after = await sessions.compile(next)
    expect(after).not.toBe(before)
    expect(await sessions.compile({ ...input(3, 3), catalog: next.catalog })).toBe(after)
    expect(sqlOf(after)).toContain('tenant = 3')
  })

  it('does not share an input holding values JSON cannot tell apart', async () => {
    const sessions = new CompiledSessions()
    // A Map writes as `{}` in JSON: two different ones would look the same.
    const odd = (entry: [string, number]) => {
      const made = input(3, 1)
      made.user = { ...made.user, attributes: { tenant: 3, extra: new Map([entry]) } }
      return made
    }
    const a = await sessions.compile(odd(['x', 1]))
    const b = await sessions.compile(odd(['y', 2]))
    expect(b).not.toBe(a)
    expect(sqlOf(a)).toContain('tenant = 3')
  })

  it('keeps a bounded number, least recently used first out', async () => {
    const sessions = new CompiledSessions()
    const first = await sessions.compile(input(0, 1))
    for (let tenant = 1; tenant <= 32; tenant++) await sessions.compile(input(tenant, 1))
    expect(await sessions.compile(input(0, 2))).not.toBe(first)
    // The most recent ones are still shared.
    expect(await sessions.compile(input(32, 3))).toBe(await sessions.compile(input(32, 4)))
  })
})
